import { connect } from 'node:net';
import type { AppConfig } from './config/app-config.js';
import { EmbeddedPostgres, embeddedDataDir, startEmbeddedPostgres } from './database/embedded-postgres.js';

/** Whether something accepts a TCP connection at host:port; only a refusal (nothing listening) says no. */
export type PortProbe = (host: string, port: number) => Promise<boolean>;

const PROBE_TIMEOUT_MS = 1000;

export const portAnswers: PortProbe = (host, port) =>
  new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answers: boolean) => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(true)); // something is there, slow: the real check reports it
    socket.once('connect', () => done(true));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code !== 'ECONNREFUSED'));
  });

/** The stores this instance runs on, once the embedded ones it chose are started. */
export interface StoreChoice {
  /** The configuration with the embedded database's postgres:// URL, and `redis.url` null when it runs without Redis. */
  config: AppConfig;
  /** The embedded database to stop after the application closes; null on a PostgreSQL server. */
  embedded: EmbeddedPostgres | null;
  /** The one start-up line saying what was chosen and why; undefined on servers named or found. */
  line?: string;
}

/**
 * Chooses the embedded database and (or) no Redis: when DATABASE_URL is
 * `pglite://<directory>` or REDIS_URL `none`, and when either is unset and
 * nothing answers on its default local port (a laptop with nothing
 * installed). A variable that is set is never second-guessed: a server it
 * names that does not answer stops the start-up as before.
 */
export async function chooseStores(
  config: AppConfig,
  { answers = portAnswers, startEmbedded = startEmbeddedPostgres }: { answers?: PortProbe; startEmbedded?: (dataDir: string) => Promise<EmbeddedPostgres> } = {},
): Promise<StoreChoice> {
  const [databaseAbsent, redisAbsent] = await Promise.all([
    config.database.defaulted ? answers('127.0.0.1', 5432).then((up) => !up) : false,
    config.redis.defaulted ? answers('127.0.0.1', 6379).then((up) => !up) : false,
  ]);
  const embeddedDir = config.database.url.startsWith('pglite://') ? embeddedDataDir(config.database.url) : databaseAbsent ? embeddedDataDir('pglite://') : null;
  const withoutRedis = config.redis.url === null || redisAbsent;
  const embedded = embeddedDir === null ? null : await startEmbedded(embeddedDir);
  const chosen: AppConfig = {
    ...config,
    // The embedded server's own database exists: nothing to create.
    database: embedded ? { ...config.database, url: embedded.url, directUrl: null, createIfMissing: false, embedded: true } : config.database,
    redis: withoutRedis ? { ...config.redis, url: null } : config.redis,
  };
  const parts: string[] = [];
  if (embedded) {
    const why = databaseAbsent ? ' (DATABASE_URL unset and nothing answers on 127.0.0.1:5432)' : '';
    parts.push(`embedded PostgreSQL (PGlite with pgvector) in ${embedded.dataDir}${why}, one statement at a time`);
  }
  if (withoutRedis) {
    const why = redisAbsent ? ' (REDIS_URL unset and nothing answers on 127.0.0.1:6379)' : '';
    parts.push(`no Redis${why}: cache, run events, cancels, rate limits and the ingest queue in this process, for one instance only`);
  }
  return { config: chosen, embedded, line: parts.length > 0 ? `running on ${parts.join('; ')}` : undefined };
}
