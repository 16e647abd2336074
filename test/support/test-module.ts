import { randomUUID } from 'node:crypto';
import { ModuleMetadata } from '@nestjs/common';
import { Test, TestingModule, TestingModuleBuilder } from '@nestjs/testing';
import pg from 'pg';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { CacheModule } from '../../src/cache/cache.module.js';
import { AppConfig, loadConfig } from '../../src/config/app-config.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { ensureDatabase } from '../../src/database/ensure-database.js';
import { NestPinoLogger } from '../../src/logging/logger.js';
import { MetricsModule } from '../../src/observability/metrics.js';
import { RateLimitModule } from '../../src/rate-limit/rate-limit.module.js';
import { TEST_JWT_SECRET, TEST_REDIS_URL, testDatabaseUrl } from './test-env.js';
import { loadGlossary } from '../../src/common/glossary.js';

type ModuleImport = NonNullable<ModuleMetadata['imports']>[number];

export interface TestModuleOptions {
  /** The module under test, and whatever it needs beyond the app-wide modules (configuration, PostgreSQL, Redis cache, rate limits). */
  imports: ModuleImport[];
  /** Environment overrides, validated like the service's own (KNOWLEDGE_TOP_K, LLM_PROVIDER…). */
  env?: Record<string, string>;
  /** Provider overrides (`builder.overrideProvider(X).useClass(Y)`), applied before compiling. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
}

export interface TestModule {
  module: TestingModule;
  config: AppConfig;
  dataSource: DataSource;
  /** Shuts the module down (its lifecycle hooks, pools and Redis clients), then drops its database. */
  close(): Promise<void>;
}

let created = 0;

/**
 * A fresh database for one testing module, on the run's server and named
 * after the run's database. Each module gets its own, so what a spec stores
 * (its knowledge base above all: the seeder only fills an empty one) neither
 * sees nor disturbs the end-to-end suites sharing the run database.
 */
export function freshDatabaseUrl(): string {
  const url = new URL(testDatabaseUrl());
  created += 1;
  url.pathname = `${url.pathname}_m${process.pid}_${created}_${randomUUID().slice(0, 4)}`;
  return url.toString();
}

export async function dropDatabase(url: string): Promise<void> {
  if (process.env.E2E_KEEP_DATABASE === 'true') return;
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * The integration tier: the module under test on the foundation modules the
 * app gives every module (configuration, PostgreSQL with its migrations run
 * at start as in production, the Redis cache, the rate limits its
 * controllers' guards need), on the real servers, without
 * AppModule and without an HTTP server. Lifecycle hooks run (`init`): tools
 * are discovered, the dense index is loaded, and the sample corpus is seeded
 * only when `env` sets `KNOWLEDGE_SEED_ON_START` (off here by default).
 */
export async function createTestModule(options: TestModuleOptions): Promise<TestModule> {
  // As the service's bootstrap and createTestApp do: the glossary's second of CPU is spent before any connection is
  // opened, not during a test's first turn, where it blocked a connection attempt in flight past its limit under CI load
  // ("The database did not answer in time" on chat-service.int-spec's first turn).
  loadGlossary();
  const databaseUrl = freshDatabaseUrl();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    MIGRATIONS_RUN: 'true',
    DATABASE_CREATE_IF_MISSING: 'false',
    REDIS_URL: TEST_REDIS_URL,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
    KNOWLEDGE_SEED_ON_START: 'false',
    // No HTTP requests here: the rate-limit guards of the modules' controllers are built but never run.
    RATE_LIMIT_CHAT_PER_MINUTE: '0',
    RATE_LIMIT_SEARCH_PER_MINUTE: '0',
    RATE_LIMIT_UPLOAD_PER_MINUTE: '0',
    ...options.env,
  });
  await ensureDatabase(databaseUrl);
  let module: TestingModule | undefined;
  try {
    let builder = Test.createTestingModule({
      // The app-wide (global) modules every feature module may rely on; RateLimitModule for the guards on their controllers.
      imports: [ConfigModule.forRoot(config), MetricsModule, DatabaseModule, CacheModule, RateLimitModule, ...options.imports],
    }).setLogger(new NestPinoLogger(pino({ level: config.logLevel })));
    if (options.override) builder = options.override(builder);
    module = await builder.compile();
    await module.init();
  } catch (error) {
    await module?.close().catch(() => undefined); // release the pools a failed start already opened
    await dropDatabase(databaseUrl).catch(() => undefined);
    throw error;
  }
  const compiled = module;
  return {
    module: compiled,
    config,
    dataSource: compiled.get(DataSource),
    close: async () => {
      try {
        await compiled.close();
      } finally {
        await dropDatabase(databaseUrl);
      }
    },
  };
}
