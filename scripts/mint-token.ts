import { pathToFileURL } from 'node:url';
import jwt from 'jsonwebtoken';
import { userIdProblem } from '../src/auth/user-id.js';
import { ConfigValidationError, loadConfig } from '../src/config/app-config.js';
import { applyEnvFile } from '../src/config/env-file.js';

const USAGE = 'usage: npm run token -- <user-id> [--admin] [--expires-in 12h]   (seconds, or 30m, 12h, 1d …)';
const DEFAULT_LIFETIME_SECONDS = 12 * 3600;

/** A token the service would refuse, or a bad command line: the message says why. */
export class MintTokenError extends Error {}

/**
 * Mints a token for `npm run token`, refusing what the service would refuse:
 * a lifetime above JWT_MAX_LIFETIME_SECONDS (the 12 h default is capped to
 * it) and a user id the guard rejects. A bare number is seconds.
 */
export function mintToken(args: string[], env: NodeJS.ProcessEnv = process.env): { token: string; notes: string[] } {
  const notes: string[] = [];
  const admin = args.includes('--admin');
  const expiresIndex = args.indexOf('--expires-in');
  const expiresRaw = expiresIndex >= 0 ? args[expiresIndex + 1] : undefined;
  const userId = args.find((arg, i) => !arg.startsWith('--') && (expiresIndex < 0 || i !== expiresIndex + 1));
  if (userId === undefined || (expiresIndex >= 0 && expiresRaw === undefined)) throw new MintTokenError(USAGE);
  const problem = userIdProblem(userId);
  if (problem) throw new MintTokenError(`user id ${JSON.stringify(userId)} ${problem}; the service would refuse the token`);

  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) throw new MintTokenError(error.message);
    throw error;
  }
  if (config.auth.usingDevelopmentSecret) notes.push('warning: JWT_SECRET is not set; signing with the development secret');
  const max = config.auth.maxTokenLifetimeSeconds;

  let expiresIn: number | string;
  if (expiresRaw === undefined) {
    expiresIn = Math.min(DEFAULT_LIFETIME_SECONDS, max);
    if (expiresIn < DEFAULT_LIFETIME_SECONDS) notes.push(`note: lifetime capped to ${max} seconds (JWT_MAX_LIFETIME_SECONDS)`);
  } else {
    // jsonwebtoken reads a bare numeric string as milliseconds; people mean seconds.
    expiresIn = /^\d+$/.test(expiresRaw.trim()) ? Number(expiresRaw.trim()) : expiresRaw;
  }

  // jsonwebtoken itself (what @nestjs/jwt signs with), so the script starts without Nest.
  let token: string;
  try {
    token = jwt.sign({ sub: userId, ...(admin ? { role: 'admin' } : {}) }, config.auth.jwtSecret, { algorithm: 'HS256', expiresIn: expiresIn as number });
  } catch {
    throw new MintTokenError(`--expires-in must be a number of seconds or a duration such as 30m, 12h or 1d (got ${JSON.stringify(expiresRaw)})`);
  }
  const { exp, iat } = jwt.decode(token) as { exp?: number; iat?: number };
  const lifetime = (exp ?? 0) - (iat ?? 0);
  if (lifetime <= 0) throw new MintTokenError(`--expires-in ${expiresRaw} gives no lifetime: pass a positive duration such as 30m or 12h`);
  if (lifetime > max) {
    throw new MintTokenError(
      `--expires-in ${expiresRaw} is ${lifetime} seconds, above the maximum token lifetime of ${max} seconds ` + '(JWT_MAX_LIFETIME_SECONDS): the service would refuse the token',
    );
  }
  return { token, notes };
}

function main(): void {
  applyEnvFile(); // the service reads .env too: the same JWT_SECRET
  try {
    const { token, notes } = mintToken(process.argv.slice(2));
    for (const note of notes) process.stderr.write(`${note}\n`);
    process.stdout.write(`${token}\n`);
  } catch (error) {
    if (!(error instanceof MintTokenError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
