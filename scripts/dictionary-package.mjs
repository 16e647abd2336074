/**
 * What the scripts that write the offline dictionaries' tables (src/common/data) share.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Runs `use` with the folder of the npm package `spec` ("name@version"), installed without install scripts into a
 * temporary folder, which is removed afterwards.
 */
export function withTemporaryPackage(spec, use) {
  const name = spec.slice(0, spec.lastIndexOf('@'));
  const folder = mkdtempSync(path.join(tmpdir(), `${name.replace(/[@/]/g, '')}-`));
  try {
    execFileSync('npm', ['install', '--prefix', folder, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', spec], { stdio: 'inherit' });
    return use(path.join(folder, 'node_modules', name));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * English auxiliaries and modals: the offline components weigh them as function words or as the light verbs they
 * are, and WordNet holds none of them as a verb (its counts read "may", "can" and "will" as nouns).
 */
export const AUXILIARIES = new Set(['be', 'have', 'do', 'can', 'will', 'may', 'shall', 'must', 'ought', 'need', 'dare', 'might', 'could', 'would', 'should']);
