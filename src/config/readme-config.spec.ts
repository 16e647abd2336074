import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { documentedDefault, ENVIRONMENT } from './environment.js';

interface ReadmeRow {
  variable: string;
  /** Backticks removed; undefined for `–` (no default). */
  default: string | undefined;
}

/** The rows of README.md's `## Configuration` table. */
function configurationTable(): ReadmeRow[] {
  const readme = readFileSync(resolve(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Configuration\n');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const rows: ReadmeRow[] = [];
  for (const line of section.split('\n')) {
    const match = /^\|\s*`([^`]+)`\s*\|([^|]*)\|/.exec(line);
    if (!match) continue;
    const cell = match[2].trim().replace(/`/g, '').trim();
    rows.push({ variable: match[1], default: cell === '–' || cell === '-' || cell === '' ? undefined : cell });
  }
  return rows;
}

describe("README's Configuration table", () => {
  const rows = configurationTable();
  const schemaNames = Object.keys(ENVIRONMENT) as (keyof typeof ENVIRONMENT)[];

  it('is found and has rows', () => {
    expect(rows.length).toBeGreaterThan(10);
  });

  it('has exactly one row for every variable of the schema', () => {
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.variable, (counts.get(row.variable) ?? 0) + 1);
    expect(schemaNames.filter((name) => counts.get(name) !== 1).map((name) => `${name}: ${counts.get(name) ?? 0} rows`)).toEqual([]);
  });

  it('names no variable the schema does not have', () => {
    expect(rows.map((row) => row.variable).filter((name) => !(name in ENVIRONMENT))).toEqual([]);
  });

  it("states each variable's default as the schema has it", () => {
    const mismatches = rows
      .filter((row) => row.variable in ENVIRONMENT)
      .map((row) => ({ variable: row.variable, readme: row.default, schema: documentedDefault(ENVIRONMENT[row.variable as keyof typeof ENVIRONMENT]) }))
      .filter((entry) => entry.readme !== entry.schema);
    expect(mismatches).toEqual([]);
  });
});
