/**
 * Instances of the built service (`node dist/main.js`) and redis-servers of a
 * bench's own, as child processes that are killed however the bench ends.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startRedisServer } from './support.js';

const READY_TIMEOUT_MS = 120_000;
// The repository root: build/bench/service-instances.js → ../..
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Everything spawned, killed on any exit (also an uncaught error or a signal). */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`${signal}: stopping instances and redis-server`);
    process.exit(130);
  });
}

/** `nest build`, unless SKIP_NEST_BUILD=true (the dist/ already built is used). */
export function buildService(): void {
  if (process.env.SKIP_NEST_BUILD === 'true') return;
  const build = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`nest build failed (${build.status ?? build.signal})`);
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
  children.delete(child);
}

export async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const redis = await startRedisServer();
  children.add(redis.child);
  return { url: redis.url, stop: () => stopChild(redis.child) };
}

export type Instance = { port: number; child: ChildProcess; startedAt: number };

/** GET `path` on the instance: its status and parsed JSON body, or undefined while it does not answer. */
export function getJson(port: number, path: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as Record<string, unknown> });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: {} });
        }
      });
    });
    req.on('error', () => resolve(undefined));
  });
}

/** Asks `ready` every `everyMs` until it is true; throws when the instance exits first or `timeoutMs` passes. */
export async function waitForInstance(instance: Instance, ready: () => Promise<boolean>, what: string, everyMs = 100, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (instance.child.exitCode !== null || instance.child.signalCode !== null) {
      throw new Error(`instance on port ${instance.port} exited (${instance.child.exitCode ?? instance.child.signalCode}) before ${what}`);
    }
    if (Date.now() > deadline) throw new Error(`instance on port ${instance.port}: not ${what} within ${timeoutMs} ms`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Starts `node dist/main.js` (local providers, rate limits off, `env` on top)
 * and, unless `wait` is false, resolves once GET /health answers 200 `ok`
 * (database and cache up).
 */
export async function startInstance(
  databaseUrl: string,
  redisUrl: string,
  jwtSecret: string,
  env: Record<string, string> = {},
  wait = true,
  nodeArgs: string[] = [],
): Promise<Instance> {
  const port = await freePort();
  const startedAt = performance.now();
  // Node flags such as --cpu-prof go on the command line: NODE_OPTIONS refuses them.
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      JWT_SECRET: jwtSecret,
      LOG_LEVEL: 'warn',
      WEB_CLIENT_ENABLED: 'false',
      LLM_PROVIDER: 'local',
      EMBEDDING_PROVIDER: 'local',
      RERANK_PROVIDER: 'local',
      RATE_LIMIT_CHAT_PER_MINUTE: '0',
      RATE_LIMIT_SEARCH_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.add(child);
  const instance = { port, child, startedAt };
  // Not listening yet (migrations, corpus seeding): asked again shortly.
  if (wait) await waitForInstance(instance, async () => (await getJson(port, '/health'))?.body.status === 'ok', 'healthy');
  return instance;
}
