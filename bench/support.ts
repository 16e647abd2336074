import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { AppConfig, loadConfig } from '../src/config/app-config.js';
import { ensureDatabase } from '../src/database/ensure-database.js';

export const PG_SERVER = process.env.BENCH_PG_SERVER ?? 'postgres://postgres@127.0.0.1:5432';

/** A throw-away database for one bench run; migrations are applied by the app at start-up. */
export async function createBenchDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  await ensureDatabase(`${PG_SERVER}/${name}`);
  return {
    url: `${PG_SERVER}/${name}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: `${PG_SERVER}/postgres` });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

export function benchConfig(databaseUrl: string, extra: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
    JWT_SECRET: 'bench-secret-not-for-production',
    LOG_LEVEL: 'warn',
    // Benches drive one user far past any per-user budget.
    RATE_LIMIT_CHAT_PER_MINUTE: '0',
    RATE_LIMIT_SEARCH_PER_MINUTE: '0',
    ...extra,
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** The milliseconds of `fn` on each item, one after another, after `warmUp` untimed calls on the first items. */
export async function timeEach<T>(items: readonly T[], fn: (item: T, i: number) => Promise<unknown>, warmUp = 0): Promise<number[]> {
  for (const [i, item] of items.slice(0, warmUp).entries()) await fn(item, i);
  const times: number[] = [];
  for (const [i, item] of items.entries()) {
    const started = performance.now();
    await fn(item, i);
    times.push(performance.now() - started);
  }
  return times;
}

/** Runs a bench's body with a throw-away database (kept with BENCH_KEEP_DATABASE=true), dropping it (and closing what the body opened) however it ends. */
export function runBench(prefix: string, body: (databaseUrl: string, onClose: (fn: () => Promise<unknown>) => void) => Promise<void>): void {
  const closers: Array<() => Promise<unknown>> = [];
  const run = async () => {
    const db = await createBenchDatabase(prefix);
    try {
      await body(db.url, (fn) => closers.unshift(fn));
    } finally {
      for (const close of closers) await close();
      if (process.env.BENCH_KEEP_DATABASE === 'true') console.log(`database kept: ${db.url}`);
      else await db.drop();
    }
  };
  run().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the bench's own (no persistence) on a free port, ready to accept connections. */
export async function startRedisServer(): Promise<{ url: string; child: ChildProcess; stop: () => void }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (/Ready to accept connections/.test(chunk.toString())) resolve();
    });
  });
  return { url: `redis://127.0.0.1:${port}`, child, stop: () => child.kill('SIGKILL') };
}
