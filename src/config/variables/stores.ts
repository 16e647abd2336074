/** PostgreSQL and Redis. */
import { z } from 'zod';
import { flag, integer } from './values.js';

export const database = {
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// connection URL')
    .default('postgres://postgres@127.0.0.1:5432/rag_chat')
    .describe('PostgreSQL connection URL'),
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
    .regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379')
    .describe('Redis URL'),
  CACHE_TTL_SECONDS: integer(1, 86400 * 30)
    .default(300)
    .describe('lifetime of cached transcripts and session lists'),
  CACHE_COMMAND_TIMEOUT_MS: integer(10, 10000).default(200).describe('longest wait for one cache call before falling back to PostgreSQL'),
};
