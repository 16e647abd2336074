import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Imports run one way: config → logging, common, observability → database, trace, models →
 * auth, cache → rate-limit → session, knowledge, health → agent → chat →
 * protocols (adapters for existing clients: OpenAI, AI SDK) and a
 * deployment's extensions (src/extensions) → the application's root files. A module may import its own folder and any
 * module of a lower rank, never one of its own rank or above.
 */
const RANK: Record<string, number> = {
  config: 0,
  logging: 1,
  common: 2,
  observability: 2,
  database: 3,
  trace: 3,
  models: 3,
  auth: 4,
  cache: 4,
  'rate-limit': 5,
  session: 6,
  knowledge: 6,
  health: 6,
  agent: 7,
  chat: 8,
  protocols: 9,
  extensions: 9,
  '(root)': 10,
};

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [full] : [];
  });
}

function moduleOf(file: string): string {
  const relative = path.relative(SRC, file).split(path.sep);
  return relative.length === 1 ? '(root)' : relative[0];
}

/** Every module a source imports, in any form TypeScript knows (import, import type, export … from, import(), typeof import()). */
export function importedModules(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/**
 * SQL statements in a source's string and template literals (comments and
 * identifiers are not read): the keyword that opens each, in upper case as
 * this code base writes SQL, so that English prose in messages does not count.
 */
export function sqlStatements(source: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(...statementsIn(node.text));
    else if (ts.isTemplateExpression(node)) found.push(...statementsIn([node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ')));
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('source.ts', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return found;
}

const SQL_STATEMENT = /\bSELECT\s|\bINSERT\s+INTO\b|\bUPDATE\s+[\w."]+\s+(?:\w+\s+)?SET\b|\bDELETE\s+FROM\b/g;

function statementsIn(text: string): string[] {
  return [...text.matchAll(SQL_STATEMENT)].map((match) => match[0].split(/\s+/)[0]);
}

/** Where SQL may be written: a module's repositories and the migrations. */
function mayHoldSql(file: string): boolean {
  const relative = path.relative(SRC, file).split(path.sep).join('/');
  return file.endsWith('.repository.ts') || relative.startsWith('database/migrations/') || SQL_EXEMPT.has(relative);
}

/**
 * Database bootstrap, which queries no table of a module: the migrations' advisory lock, the
 * CREATE DATABASE check, the role's defaults for connections through a transaction pooler
 * (catalogs only), and the read replica's lag probe (recovery functions only). Every other
 * statement lives in a repository or a migration.
 */
const SQL_EXEMPT = new Set<string>(['database/migration-runner.ts', 'database/ensure-database.ts', 'database/pooled-session-defaults.ts', 'database/read-replica.ts']);

function importsOf(file: string): string[] {
  return importedModules(readFileSync(file, 'utf8'))
    .filter((name) => name.startsWith('.'))
    .map((name) => path.resolve(path.dirname(file), name));
}

describe('module layering', () => {
  const files = sourceFiles(SRC);

  it.each([
    ['single quotes', `import { ChatService } from '../chat/chat.service.js';`],
    ['double quotes', `import { ChatService } from "../chat/chat.service.js";`],
    ['import type', `import type { TurnResult } from "../chat/chat.service.js";`],
    ['export from', `export { ChatService } from "../chat/chat.service.js";`],
    ['dynamic import, template literal', 'const chat = await import(`../chat/chat.service.js`);'],
    ['dynamic import', 'const chat = await import("../chat/chat.service.js");'],
    ['import type query', `let t: typeof import('../chat/chat.service.js');`],
  ])('sees an import written with %s', (_form, source) => {
    expect(importedModules(source)).toEqual(['../chat/chat.service.js']);
  });

  it('knows the rank of every module', () => {
    expect([...new Set(files.map(moduleOf))].filter((module) => RANK[module] === undefined)).toEqual([]);
  });

  it('has no import from a module of the same or a higher rank', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = moduleOf(file);
      for (const target of importsOf(file)) {
        if (!target.startsWith(SRC)) continue;
        const to = moduleOf(target);
        if (to !== from && RANK[to] >= RANK[from]) violations.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it.each([
    ['a string literal', `await db.query('SELECT id FROM sessions WHERE user_id = $1', [userId]);`, ['SELECT']],
    ['a template literal', 'await db.query(`UPDATE chat_runs SET ended_at = now() WHERE id = ${id}`);', ['UPDATE']],
    ['a template literal split by a substitution', 'const sql = `INSERT ${"INTO"} x`; await db.query(`DELETE FROM ${table} WHERE id = $1`);', ['DELETE']],
    ['a CTE', 'await db.query(`WITH gone AS (DELETE FROM messages WHERE id = $1 RETURNING 1) SELECT count(*) FROM gone`);', ['DELETE', 'SELECT']],
    ['an INSERT', "sqlRows(m, 'INSERT INTO api_keys (id) VALUES ($1)', [id]);", ['INSERT']],
  ])('sees SQL in %s', (_form, source, keywords) => {
    expect(sqlStatements(source)).toEqual(keywords);
  });

  it.each([
    ['a comment', '// SELECT id FROM sessions, then UPDATE chat_runs SET ended_at\nconst x = 1;'],
    ['a block comment', '/* DELETE FROM messages WHERE id = $1 */ const x = 1;'],
    ['prose', `throw new Error('Select a file, then update the index and delete from the list');`],
  ])('sees no SQL in %s', (_form, source) => {
    expect(sqlStatements(source)).toEqual([]);
  });

  it('fails a source file that holds SQL outside a repository (a deliberate violation)', () => {
    const violation = `export class SessionsService {
  find(id: string) { return this.dataSource.query('SELECT * FROM sessions WHERE id = $1', [id]); }
}`;
    expect(sqlOutsideRepositories([[path.join(SRC, 'session', 'sessions.service.ts'), violation]])).toEqual(['session/sessions.service.ts: SELECT']);
    expect(sqlOutsideRepositories([[path.join(SRC, 'session', 'sessions.repository.ts'), violation]])).toEqual([]);
    expect(sqlOutsideRepositories([[path.join(SRC, 'database', 'migrations', '1-Sessions.ts'), violation]])).toEqual([]);
  });

  it('has no SQL statement outside a repository or a migration', () => {
    expect(sqlOutsideRepositories(files.map((file) => [file, readFileSync(file, 'utf8')]))).toEqual([]);
  });

  it('fails an import of a knowledge internal from another module (a deliberate violation)', () => {
    const tool = path.join(SRC, 'agent', 'tools', 'knowledge', 'knowledge-search.tool.ts');
    const internal = path.join(SRC, 'knowledge', 'answering', 'knowledge-flow.service.js');
    expect(knowledgeInternalsImported([[tool, [internal]]])).toEqual(['agent/tools/knowledge/knowledge-search.tool.ts → knowledge/answering/knowledge-flow.service.ts']);
    expect(knowledgeInternalsImported([[tool, [path.join(SRC, 'knowledge', 'public-api.js')]]])).toEqual([]);
    expect(knowledgeInternalsImported([[path.join(SRC, 'knowledge', 'knowledge.module.ts'), [internal]]])).toEqual([]);
  });

  it('has other modules reach the knowledge module through its door only', () => {
    expect(knowledgeInternalsImported(files.map((file) => [file, importsOf(file)]))).toEqual([]);
  });

  it('exempts only files that exist and still hold SQL', () => {
    const stale = [...SQL_EXEMPT].filter((relative) => {
      const file = path.join(SRC, relative);
      return !files.includes(file) || sqlStatements(readFileSync(file, 'utf8')).length === 0;
    });
    expect(stale).toEqual([]);
  });
});

/** The files of src/knowledge that other modules may import: its Nest module and its door. */
const KNOWLEDGE_DOORS = new Set(['knowledge/knowledge.module.ts', 'knowledge/public-api.ts']);

/** `file → target` for each import of a knowledge internal by a file outside src/knowledge. */
function knowledgeInternalsImported(imports: Array<[file: string, targets: string[]]>): string[] {
  const relative = (file: string) => path.relative(SRC, file).split(path.sep).join('/');
  return imports.flatMap(([file, targets]) =>
    moduleOf(file) === 'knowledge'
      ? []
      : targets
          .map((target) => relative(target).replace(/\.js$/, '.ts'))
          .filter((target) => target.startsWith('knowledge/') && !KNOWLEDGE_DOORS.has(target))
          .map((target) => `${relative(file)} → ${target}`),
  );
}

/** `file: KEYWORD` for each SQL statement in a source file where SQL may not be written. */
function sqlOutsideRepositories(sources: Array<[file: string, text: string]>): string[] {
  return sources.flatMap(([file, text]) => (mayHoldSql(file) ? [] : sqlStatements(text).map((keyword) => `${path.relative(SRC, file).split(path.sep).join('/')}: ${keyword}`)));
}

/**
 * What in a source looks a provider up at run time instead of injecting it:
 * `ModuleRef` (its get/resolve/create reach any module, also one above the
 * caller, where the import rule above cannot see it) and any lookup option
 * `strict: false`. Dependencies must be constructor injections of imported
 * modules, so that they show in the imports and run one way.
 */
export function runtimeLookups(source: string): string[] {
  const found: string[] = [];
  const file = ts.createSourceFile('source.ts', source, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === 'ModuleRef') found.push('ModuleRef');
    if (
      ts.isPropertyAssignment(node) &&
      (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
      node.name.text === 'strict' &&
      node.initializer.kind === ts.SyntaxKind.FalseKeyword
    ) {
      found.push('strict: false');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...new Set(found)];
}

describe('no runtime lookups across modules', () => {
  it.each([
    [
      'ModuleRef.get, not strict',
      `constructor(private readonly moduleRef: ModuleRef) {}\nfind() { return this.moduleRef.get(RunRegistry, { strict: false }); }`,
      ['ModuleRef', 'strict: false'],
    ],
    ['ModuleRef.resolve', `import { ModuleRef } from '@nestjs/core';\nconst x = await ref.resolve(ChatService, undefined, { "strict": false });`, ['ModuleRef', 'strict: false']],
    ['an app lookup, not strict', `const registry = app.get(RunRegistry, { strict: false });`, ['strict: false']],
    ['constructor injection only', `constructor(private readonly runs: RunRegistry) {}\nconst o = { strict: true };`, []],
  ])('sees %s', (_form, source, expected) => {
    expect(runtimeLookups(source)).toEqual(expected);
  });

  it('has no ModuleRef and no `strict: false` lookup in src', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      for (const lookup of runtimeLookups(readFileSync(file, 'utf8'))) violations.push(`${path.relative(SRC, file)}: ${lookup}`);
    }
    expect(violations).toEqual([]);
  });
});
