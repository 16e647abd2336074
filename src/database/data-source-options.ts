import { EXIT_CONFIG, StartupFailure } from '../common/startup-failure.js';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { boundedPoolOptions, ListenedClient, UNLIMITED_SESSION_OPTIONS } from './pg-clients.js';
import { InitialSchema1764547200000 } from './migrations/1764547200000-InitialSchema.js';
import { ChatRuns1764633600000 } from './migrations/1764633600000-ChatRuns.js';
import { LangGraphCheckpoints1764633600001 } from './migrations/1764633600001-LangGraphCheckpoints.js';
import { KnowledgeBase1764720000000 } from './migrations/1764720000000-KnowledgeBase.js';
import { PgvectorEmbeddings1764806400000 } from './migrations/1764806400000-PgvectorEmbeddings.js';
import { SessionOwnedRuns1764892800000 } from './migrations/1764892800000-SessionOwnedRuns.js';
import { CancelledRuns1764979200000 } from './migrations/1764979200000-CancelledRuns.js';
import { ClientMessageFields1764979200005 } from './migrations/1764979200005-ClientMessageFields.js';
import { RunMessages1764979200010 } from './migrations/1764979200010-RunMessages.js';
import { ApiKeys1764979200020 } from './migrations/1764979200020-ApiKeys.js';
import { IndexIdentity1764979200030 } from './migrations/1764979200030-IndexIdentity.js';
import { IngestJobs1764979200040 } from './migrations/1764979200040-IngestJobs.js';
import { DeferredBulkBuilds1764979200050 } from './migrations/1764979200050-DeferredBulkBuilds.js';
import { AbandonedRunsForgetCheckpoints1764979200070 } from './migrations/1764979200070-AbandonedRunsForgetCheckpoints.js';
import { DeletableIngests1764979200080 } from './migrations/1764979200080-DeletableIngests.js';
import { SessionActiveRun1764979200090 } from './migrations/1764979200090-SessionActiveRun.js';
import { CheckpointForgetLockOrder1764979200100 } from './migrations/1764979200100-CheckpointForgetLockOrder.js';
import { ChunkLocations1764979200110 } from './migrations/1764979200110-ChunkLocations.js';
import { KnowledgeCollections1764979200200 } from './migrations/1764979200200-KnowledgeCollections.js';
import { ApiKeyGroups1764979200210 } from './migrations/1764979200210-ApiKeyGroups.js';
import { MessageTools1764979200550 } from './migrations/1764979200550-MessageTools.js';
import { LangGraphPendingRuns1764979200620 } from './migrations/1764979200620-LangGraphPendingRuns.js';
import { KnowledgeCatalogVersion1764979200700 } from './migrations/1764979200700-KnowledgeCatalogVersion.js';

export const MIGRATIONS = [
  InitialSchema1764547200000,
  ChatRuns1764633600000,
  LangGraphCheckpoints1764633600001,
  KnowledgeBase1764720000000,
  PgvectorEmbeddings1764806400000,
  SessionOwnedRuns1764892800000,
  CancelledRuns1764979200000,
  ClientMessageFields1764979200005,
  RunMessages1764979200010,
  ApiKeys1764979200020,
  IndexIdentity1764979200030,
  IngestJobs1764979200040,
  DeferredBulkBuilds1764979200050,
  AbandonedRunsForgetCheckpoints1764979200070,
  DeletableIngests1764979200080,
  SessionActiveRun1764979200090,
  CheckpointForgetLockOrder1764979200100,
  ChunkLocations1764979200110,
  KnowledgeCollections1764979200200,
  ApiKeyGroups1764979200210,
  MessageTools1764979200550,
  LangGraphPendingRuns1764979200620,
  KnowledgeCatalogVersion1764979200700,
];

/** PostgreSQL itself: DATABASE_DIRECT_URL, or DATABASE_URL. */
export function directDatabaseUrl(database: AppConfig['database']): string {
  return database.directUrl ?? database.url;
}

/** DATABASE_URL is a transaction pooler in front of DATABASE_DIRECT_URL: its connections carry no session state. */
export function throughPooler(database: AppConfig['database']): boolean {
  return database.directUrl !== null && database.directUrl !== database.url;
}

/**
 * How long a request waits for a connection. On the embedded database
 * connections queue behind the transaction in progress (a large upload's
 * takes seconds): they wait as long as a statement may run instead of
 * failing after 5 s.
 */
export function connectTimeoutMs(config: AppConfig): number {
  return config.database.embedded ? Math.max(5000, config.database.statementTimeoutMs) : 5000;
}

/**
 * One definition for the app, the TypeORM CLI (ormconfig.ts) and the tests.
 * `synchronize` is never on. The app's pool bounds every statement
 * (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_LOCK_TIMEOUT_MS); `maintenance`
 * options have no time limits, for migrations and index builds, and go to
 * PostgreSQL itself (DATABASE_DIRECT_URL) past a transaction pooler.
 */
export function buildDataSourceOptions(config: AppConfig, use: 'app' | 'maintenance' = 'app'): DataSourceOptions {
  if (config.database.url.startsWith('pglite://')) {
    // The service puts the embedded server's postgres:// URL here when it starts it; a tool reading the variable as is gets this.
    throw new StartupFailure(
      'DATABASE_URL',
      'pglite:// is the embedded database, which only the service opens (its migrations run when it starts); this command needs a PostgreSQL server',
      EXIT_CONFIG,
    );
  }
  const pooled = throughPooler(config.database);
  const limits =
    use === 'app'
      ? boundedPoolOptions({ statementTimeoutMs: config.database.statementTimeoutMs, lockTimeoutMs: config.database.lockTimeoutMs, pooled })
      : // On PostgreSQL itself; the role's defaults set for the pooled connections must not bound a migration or an index build.
        { Client: ListenedClient, ...(pooled ? { options: UNLIMITED_SESSION_OPTIONS } : {}) };
  return {
    type: 'postgres',
    url: use === 'app' ? config.database.url : directDatabaseUrl(config.database),
    // Each feature module registers its own entities (TypeOrmModule.forFeature + autoLoadEntities); the schema is the migrations'.
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsRun: config.database.migrationsRun,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: {
      max: config.database.poolSize,
      connectionTimeoutMillis: connectTimeoutMs(config),
      application_name: 'agentic-rag-chat',
      ...limits,
    },
  };
}
