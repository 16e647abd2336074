import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Imports run one way: config → logging, common → database, trace, models →
 * auth, cache → rate-limit → session, knowledge, health → agent → chat →
 * protocols (adapters for existing clients: OpenAI, AI SDK) → the
 * application's root files. A module may import its own folder and any
 * module of a lower rank, never one of its own rank or above.
 */
const RANK: Record<string, number> = {
  config: 0,
  logging: 1,
  common: 2,
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
});

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
    ['ModuleRef.get, not strict', `constructor(private readonly moduleRef: ModuleRef) {}\nfind() { return this.moduleRef.get(RunRegistry, { strict: false }); }`, ['ModuleRef', 'strict: false']],
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
