import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import prettier from 'prettier';
import ts from 'typescript';

/**
 * Every TypeScript block of the README and the pages under docs/ compiles, as the file it says it is: a block whose
 * first line is a path comment (`// src/extensions/unit-converter/unit-converter.tool.ts`) is type-checked at that
 * path of this repository, so its relative imports reach the real modules; any other block is type-checked as a
 * file of its own beside the page. The repository's compiler options apply (tsconfig.json).
 */

const root = process.cwd();
const FENCE = /^\s*```(ts|typescript|tsx)\s*$/;
const PATH_COMMENT = /^\/\/ ((?:src|test|scripts|bench|web|clients)\/[\w./-]+\.tsx?)$/;

/** extending.md's examples that test/extending.e2e-spec.ts does not run (they are type-checked only). */
const EXAMPLES_NOT_RUN = new Set(['src/extensions/index.ts', 'src/protocols/plain-text/plain-text-stream.ts']);

export interface CodeBlock {
  /** The page and the line of the block's first line of code. */
  where: string;
  /** Where the block is type-checked, relative to the repository. */
  file: string;
  code: string;
}

function pages(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name));
  return ['README.md', ...docs, path.join('clients', 'typescript', 'README.md')];
}

/** The TypeScript blocks of one Markdown page. */
export function typeScriptBlocks(page: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const fence = FENCE.exec(lines[i]);
    if (!fence) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end += 1;
    const code = lines.slice(start, end).join('\n');
    const named = PATH_COMMENT.exec(lines[start] ?? '')?.[1];
    const beside = path.join(path.dirname(page), `.${path.basename(page, '.md')}-line-${start + 1}.${fence[1] === 'tsx' ? 'tsx' : 'ts'}`);
    blocks.push({ where: `${page}:${start + 1}`, file: named ?? beside, code });
    i = end;
  }
  return blocks;
}

function ancestors(folder: string): string[] {
  const parent = path.dirname(folder);
  return parent === folder ? [folder] : [folder, ...ancestors(parent)];
}

const parsed = new Map<string, ts.SourceFile | undefined>();

/** The repository's and the libraries' files parsed once for every program of this spec. */
function cachedSourceFiles(read: ts.CompilerHost['getSourceFile']): ts.CompilerHost['getSourceFile'] {
  return (file, language, ...rest) => {
    if (!parsed.has(file)) parsed.set(file, read(file, language, ...rest));
    return parsed.get(file);
  };
}

/** The compiler's errors in `blocks`, each as `page:line: message`, type-checked together over the repository. */
export function compileErrors(blocks: CodeBlock[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('tsconfig.json could not be read');
  const options: ts.CompilerOptions = { ...config.options, noEmit: true, jsx: ts.JsxEmit.ReactJSX };
  const virtual = new Map(blocks.map((block) => [path.join(root, block.file), block]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile } = host;
  const getSourceFile = cachedSourceFiles(host.getSourceFile);
  const folders = new Set([...virtual.keys()].flatMap((file) => ancestors(path.dirname(file))));
  const { directoryExists } = host;
  host.directoryExists = (folder) => folders.has(path.resolve(folder)) || (directoryExists?.call(host, folder) ?? ts.sys.directoryExists(folder));
  host.fileExists = (file) => virtual.has(path.resolve(file)) || fileExists.call(host, file);
  host.readFile = (file) => virtual.get(path.resolve(file))?.code ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const block = virtual.get(path.resolve(file));
    return block ? ts.createSourceFile(file, block.code, language, true) : getSourceFile(file, language, ...rest);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  const errors: string[] = [];
  for (const [file, block] of virtual) {
    const source = program.getSourceFile(file);
    if (!source) {
      errors.push(`${block.where}: not compiled`);
      continue;
    }
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line;
      const [page, first] = block.where.split(/:(?=\d+$)/);
      errors.push(`${page}:${Number(first) + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    }
  }
  return errors;
}

describe('the TypeScript blocks of the documentation', () => {
  const blocks = pages().flatMap((page) => typeScriptBlocks(page, readFileSync(path.join(root, page), 'utf8')));

  it('finds the blocks, and places a block that names its file at that file', () => {
    expect(blocks.length).toBeGreaterThan(10);
    const [block] = typeScriptBlocks('docs/x.md', '# x\n\n```ts\n// src/extensions/a/a.ts\nexport const a = 1;\n```\n');
    expect(block).toEqual({ where: 'docs/x.md:4', file: 'src/extensions/a/a.ts', code: '// src/extensions/a/a.ts\nexport const a = 1;' });
  });

  it('reports a block that does not compile, at its page and line (a deliberate error)', () => {
    const broken = typeScriptBlocks('docs/x.md', "# x\n\n```ts\n// src/extensions/a/a.ts\nimport { AppModule } from '../../app.module.js';\nconst n: number = AppModule;\n```\n");
    expect(compileErrors(broken)).toEqual([expect.stringMatching(/^docs\/x\.md:6: Type 'typeof AppModule' is not assignable to type 'number'/)]);
  }, 60_000);

  it("shows extending.md's examples as test/extending.e2e-spec.ts runs them (formatted alike, imports aside)", async () => {
    const options = { ...(await prettier.resolveConfig(path.join(root, 'test', 'extending.e2e-spec.ts'))), parser: 'typescript' };
    const testSource = readFileSync(path.join(root, 'test', 'extending.e2e-spec.ts'), 'utf8');
    const tested = blocks.filter((block) => block.where.startsWith(path.join('docs', 'extending.md')) && !EXAMPLES_NOT_RUN.has(block.file));
    expect(tested.map((block) => block.file)).toHaveLength(6);
    const body = (code: string) =>
      code
        .split('\n')
        .filter((line, i) => i > 0 || !PATH_COMMENT.test(line))
        .join('\n')
        .replace(/^import[\s\S]*?from '[^']+';\n/gm, '')
        .trim();
    const missing = [];
    for (const block of tested) {
      const formatted = (await prettier.format(body(block.code), options)).trim();
      if (!testSource.includes(formatted)) missing.push(block.where);
    }
    expect(missing).toEqual([]);
  });

  it('compiles every block', () => {
    expect(compileErrors(blocks)).toEqual([]);
  }, 120_000);
});
