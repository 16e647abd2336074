import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Imports run one way: config → logging, common → database, trace, models →
 * auth, cache → rate-limit → session, knowledge, health → agent → chat → the
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
  '(root)': 9,
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

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => path.resolve(path.dirname(file), match[1]));
}

describe('module layering', () => {
  const files = sourceFiles(SRC);

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
