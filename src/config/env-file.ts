import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

export interface EnvFileOutcome {
  /** The file read, absolute. */
  path: string;
  /** Variables the file set. */
  applied: string[];
  /** Variables the file names that the real environment already had: the environment's value is kept. */
  kept: string[];
}

/**
 * Reads `.env` from `directory` (the working directory) into `env`, when the
 * file exists: a variable already in the environment keeps its value, so
 * `PORT=4000 npm start` beats the file. Not read when the real environment
 * says `NODE_ENV=test`, so a developer's `.env` never reaches the tests.
 * The syntax is Node's (util.parseEnv: `NAME=value`, quotes, `#` comments,
 * `export NAME=value`).
 */
export function applyEnvFile(env: NodeJS.ProcessEnv = process.env, directory = process.cwd()): EnvFileOutcome | undefined {
  if (env.NODE_ENV === 'test') return undefined;
  const file = path.resolve(directory, '.env');
  if (!existsSync(file)) return undefined;
  const parsed = parseEnv(readFileSync(file, 'utf8'));
  const applied: string[] = [];
  const kept: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (value === undefined) continue;
    if (env[name] !== undefined) {
      kept.push(name);
      continue;
    }
    env[name] = value;
    applied.push(name);
  }
  return { path: file, applied, kept };
}

/** The start-up line about the file, naming variables only (values may be secrets). */
export function describeEnvFile(outcome: EnvFileOutcome): string {
  const kept = outcome.kept.length ? `; ${outcome.kept.length} already set in the environment, kept from there (${outcome.kept.join(', ')})` : '';
  return `read ${outcome.path}: ${outcome.applied.length} variable${outcome.applied.length === 1 ? '' : 's'}${kept}`;
}
