/** PostgreSQL and Redis. */
import { z } from 'zod';
import { flag, integer } from './values.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/rag_chat';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export const database = {
  DATABASE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/.+|pglite:\/\/.*)$/, 'must be a postgres:// connection URL, or pglite://<directory> for the embedded database')
    .optional()
    .describe(
      'PostgreSQL connection URL, or `pglite://<directory>` for the embedded database (PGlite; `pglite://` alone: `./data/pglite`); unset: the default, or the embedded database when nothing answers on 127.0.0.1:5432',
    )
    .meta({ readmeDefault: `${DEFAULT_DATABASE_URL}` }),
  DATABASE_DIRECT_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// connection URL')
    .optional()
    .describe(
      'PostgreSQL itself when DATABASE_URL is a transaction pooler (PgBouncer with pool_mode=transaction): migrations, their session advisory lock, HNSW index builds and creating the database go here; set and different from DATABASE_URL, the pooled connections carry no session settings (see Scaling)',
    )
    .meta({ readmeDefault: 'DATABASE_URL' }),
  DATABASE_READ_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// connection URL')
    .optional()
    .describe(
      'a streaming replica of the database (hot standby) for the reads that may lag: the session list, the transcript, knowledge search and the collection list; a user’s own writes are never hidden from them, and the primary serves everything while the replica is down or lags past DATABASE_READ_MAX_LAG_MS (see Scaling)',
    ),
  DATABASE_READ_MAX_LAG_MS: integer(50, 3600000).default(5000).describe('the most the read replica may lag behind the primary and still serve reads'),
  DATABASE_POOL_SIZE: integer(1, 200).default(10).describe('connections in the pool'),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600000).default(15000).describe('longest statement (statement_timeout)'),
  DATABASE_LOCK_TIMEOUT_MS: integer(100, 600000).default(5000).describe('longest wait for a lock (lock_timeout)'),
  DATABASE_CREATE_IF_MISSING: flag()
    .optional()
    .describe('create the database named in DATABASE_URL at start-up when absent; unset: true, false with NODE_ENV=production')
    .meta({ readmeDefault: 'true (false with NODE_ENV=production)' }),
  MIGRATIONS_RUN: flag().default(true).describe('apply pending migrations at start-up'),
};

export const cache = {
  REDIS_URL: z
    .string()
    .regex(/^(rediss?:\/\/.+|none)$/, 'must be a redis:// or rediss:// URL, or none')
    .optional()
    .describe(
      'Redis URL (`redis://` or `rediss://`, optional `/db`), or `none` to run without Redis (one instance); unset: the default, or none when nothing answers on 127.0.0.1:6379',
    )
    .meta({ readmeDefault: `${DEFAULT_REDIS_URL}` }),
  REDIS_SENTINELS: z
    .string()
    .regex(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/, 'must be host:port pairs separated by commas')
    .transform((value) => value.split(',').map((node) => node.trim()))
    .optional()
    .describe(
      'Redis Sentinel nodes (`host:port,…`): every Redis use follows the master REDIS_SENTINEL_MASTER names through a failover; REDIS_URL, when set, then gives only the master’s user, password and database number',
    ),
  REDIS_SENTINEL_MASTER: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be the master group name the sentinels monitor')
    .optional()
    .describe('the master group name the sentinels monitor (required with REDIS_SENTINELS)'),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional().describe('the password of the sentinels themselves (their `requirepass`), when they have one'),
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/, 'must be host:port pairs separated by commas')
    .transform((value) => value.split(',').map((node) => node.trim()))
    .optional()
    .describe(
      'Redis Cluster nodes to discover the cluster from (`host:port,…`, any of its masters): every Redis use is a cluster client and keys used together share a hash tag; REDIS_URL, when set, then gives only the nodes’ user and password (see Scaling)',
    ),
  REDIS_CLUSTER_RUN_SHARDS: integer(1, 64)
    .default(3)
    .describe(
      'with REDIS_CLUSTER_NODES: how many hash tags run event streams and cancel channels are spread over (set it to the number of masters): each instance’s shared follower tail keeps one blocking read per tag',
    ),
  CACHE_TTL_SECONDS: integer(1, 86400 * 30)
    .default(300)
    .describe('lifetime of cached transcripts and session lists'),
  CACHE_COMMAND_TIMEOUT_MS: integer(10, 10000).default(200).describe('longest wait for one cache call before falling back to PostgreSQL'),
};
