import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyEnvFile, describeEnvFile } from './env-file.js';

describe('applyEnvFile (.env in the working directory)', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), 'env-file-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const write = (text: string) => writeFileSync(path.join(directory, '.env'), text);

  it('sets the variables the environment does not have, and keeps those it has', () => {
    write('# local settings\nLLM_PROVIDER=openai\nexport LLM_MODEL="qwen2.5 7b"\nPORT=4000\nEMPTY=\n');
    const env: NodeJS.ProcessEnv = { PORT: '3000' };
    const outcome = applyEnvFile(env, directory);
    expect(env).toEqual({ PORT: '3000', LLM_PROVIDER: 'openai', LLM_MODEL: 'qwen2.5 7b', EMPTY: '' });
    expect({ ...outcome, applied: outcome?.applied.sort() }).toEqual({ path: path.join(directory, '.env'), applied: ['EMPTY', 'LLM_MODEL', 'LLM_PROVIDER'], kept: ['PORT'] });
    expect(describeEnvFile(outcome!)).toBe(`read ${path.join(directory, '.env')}: 3 variables; 1 already set in the environment, kept from there (PORT)`);
  });

  it('keeps a variable the environment sets to the empty string (set is set)', () => {
    write('JWT_SECRET=from-the-file-0123456789\n');
    const env: NodeJS.ProcessEnv = { JWT_SECRET: '' };
    applyEnvFile(env, directory);
    expect(env.JWT_SECRET).toBe('');
  });

  it('does nothing without a file', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(applyEnvFile(env, directory)).toBeUndefined();
    expect(env).toEqual({});
  });

  it('is not read when the environment says NODE_ENV=test (a developer’s .env never reaches the tests)', () => {
    write('LLM_PROVIDER=openai\n');
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'test' };
    expect(applyEnvFile(env, directory)).toBeUndefined();
    expect(env).toEqual({ NODE_ENV: 'test' });
  });

  it('names no value in its start-up line (a value may be a secret)', () => {
    write('JWT_SECRET=very-secret-value-0123456789\n');
    const outcome = applyEnvFile({}, directory)!;
    expect(describeEnvFile(outcome)).toBe(`read ${path.join(directory, '.env')}: 1 variable`);
  });
});
