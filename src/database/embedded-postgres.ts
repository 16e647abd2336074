import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import type { PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';
import { ExclusiveQueryQueue } from './embedded-query-queue.js';
import { EXIT_CONFIG, StartupFailure } from '../common/startup-failure.js';

/** Where the embedded database keeps its files when `pglite://` names no directory. */
export const DEFAULT_EMBEDDED_DIR = './data/pglite';

/** The embedded PostgreSQL (PGlite) a `pglite://` DATABASE_URL chooses, served over the PostgreSQL protocol on loopback. */
export interface EmbeddedPostgres {
  /** The postgres:// URL the service (TypeORM, the checkpointer, the migration lock) connects to. */
  url: string;
  /** The directory its files are in, as resolved. */
  dataDir: string;
  /** Closes the server and the database, flushing it to disk; after the service's own connections are closed. */
  stop(): Promise<void>;
}

/** The directory a `pglite://<directory>` URL names (relative to the working directory; `pglite://` alone: ./data/pglite). */
export function embeddedDataDir(url: string): string {
  const named = url.replace(/^pglite:\/\//, '');
  return path.resolve(named === '' ? DEFAULT_EMBEDDED_DIR : named);
}

/** One process at a time: PGlite has no lock of its own, and two writers would corrupt its files. */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = path.join(dataDir, 'service.pid');
  const fail = (problem: string) => new StartupFailure('DATABASE_URL', `the embedded database at ${dataDir} ${problem}`, EXIT_CONFIG);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      // Written whole under a temporary name, then linked into place: a starter never reads a half-written lock.
      const staged = `${lockFile}.${process.pid}`;
      await writeFile(staged, String(process.pid));
      try {
        await link(staged, lockFile);
      } finally {
        await rm(staged, { force: true });
      }
      return () => rm(lockFile, { force: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw fail(`cannot be locked: ${(error as Error).message}`);
      const holder = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
      if (!Number.isInteger(holder) || holder <= 0) throw fail(`has an unreadable ${lockFile}: remove it if no service runs on it`);
      if (holder !== process.pid && processAlive(holder)) throw fail(`is in use by process ${holder}; stop it or choose another directory`);
      // Left by a process that died: taken over.
      await rm(lockFile, { force: true });
    }
  }
  throw fail('could not be locked');
}

/** A directory that holds something other than a PGlite database is not taken over (`pglite:///` or a home directory by mistake). */
async function checkDataDir(dataDir: string): Promise<void> {
  const names = await readdir(dataDir).catch((error: Error) => {
    throw new StartupFailure('DATABASE_URL', `the embedded database's directory ${dataDir} cannot be read: ${error.message}`, EXIT_CONFIG);
  });
  const entries = names.filter((name) => name !== 'service.pid' && !name.startsWith('service.pid.'));
  if (entries.length > 0 && !entries.includes('PG_VERSION')) {
    throw new StartupFailure('DATABASE_URL', `${dataDir} is not empty and holds no database: choose an empty or new directory for the embedded database`, EXIT_CONFIG);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly, with pgvector) on
 * `dataDir` and serves it on an ephemeral loopback port, each connection
 * speaking the protocol through pglite-socket's handler. PGlite is one
 * backend: statements run one at a time, and while a connection is inside
 * a transaction every other connection waits for it to end
 * (ExclusiveQueryQueue), so transactions stay apart at the cost of running
 * none side by side.
 */
export async function startEmbeddedPostgres(dataDir: string, { idleTransactionMs = 30_000 }: { idleTransactionMs?: number } = {}): Promise<EmbeddedPostgres> {
  await mkdir(dataDir, { recursive: true }).catch((error: Error) => {
    throw new StartupFailure('DATABASE_URL', `the embedded database's directory ${dataDir} cannot be created: ${error.message}`, EXIT_CONFIG);
  });
  await checkDataDir(dataDir);
  const unlock = await lockDataDir(dataDir);
  // Loaded only in this mode: the WebAssembly build is large.
  const [{ PGlite }, { vector }, { PGLiteSocketHandler }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite-socket'),
  ]);
  let db: InstanceType<typeof PGlite>;
  try {
    db = await PGlite.create({ dataDir, extensions: { vector } });
  } catch (error) {
    await unlock();
    throw new StartupFailure('DATABASE_URL', `the embedded database at ${dataDir} cannot be opened: ${(error as Error).message}`, EXIT_CONFIG);
  }
  const connections = new Set<InstanceType<typeof PGLiteSocketHandler>>();
  const queue = new ExclusiveQueryQueue(
    db,
    (id) => {
      for (const connection of connections) if (connection.handlerId === id) void connection.detach(true);
    },
    idleTransactionMs,
  );
  const server = createServer((socket) => {
    // The handler speaks the protocol; our queue decides whose message runs (its type names the library's own class).
    const handler = new PGLiteSocketHandler({ queryQueue: queue as unknown as PGLiteSocketHandlerOptions['queryQueue'], closeOnDetach: true });
    connections.add(handler);
    handler.addEventListener('close', () => connections.delete(handler));
    handler.addEventListener('error', () => connections.delete(handler));
    handler.attach(socket).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    async stop() {
      for (const connection of connections) await connection.detach(true);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
      await unlock();
    },
  };
}
