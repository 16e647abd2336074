import { ModuleMetadata } from '@nestjs/common';

type ModuleImport = NonNullable<ModuleMetadata['imports']>[number];
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { JwtService } from '@nestjs/jwt';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { AppConfig, loadConfig } from '../../src/config/app-config.js';
import { createRootLogger, NestPinoLogger } from '../../src/logging/logger.js';
import { applyHttpTimeouts, setupApp } from '../../src/setup-app.js';
import { SessionStorage, sessionStorage } from './session-storage.js';
import { TEST_JWT_SECRET, TEST_REDIS_URL, testDatabaseUrl } from './test-env.js';
import { DenseRecall } from '../../src/knowledge/index/dense/dense-recall.service.js';
import { loadGlossary } from '../../src/common/glossary.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  storage: SessionStorage;
  dataSource: DataSource;
  /** A bearer header for `userId`. */
  auth(userId: string, claims?: Record<string, unknown>): { Authorization: string };
  /** Starts listening on a free loopback port; returns the base URL (for streaming clients). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** The real app on the run's database and the test Redis database; env overrides per test file. */
export async function createTestApp(
  env: Record<string, string> = {},
  logDestination?: pino.DestinationStream,
  extraImports: ModuleImport[] = [],
  /** awaitDenseIndex false: returns before the in-memory dense index has loaded (tests of that load). */
  { awaitDenseIndex = true }: { awaitDenseIndex?: boolean } = {},
): Promise<TestApp> {
  // As the service's bootstrap does: the glossary's second of CPU is spent before the app starts, not during a
  // test's first turn, where it would hold up that turn's heartbeats past a short RUN_STALE_AFTER_MS.
  loadGlossary();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: testDatabaseUrl(),
    MIGRATIONS_RUN: 'true',
    DATABASE_CREATE_IF_MISSING: 'false',
    REDIS_URL: TEST_REDIS_URL,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const root = logDestination ? createRootLogger(config.logLevel, logDestination) : pino({ level: config.logLevel });
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config, extraImports)] }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    bodyParser: false,
    logger: new NestPinoLogger(root),
  });
  setupApp(app, config, root);
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined); // release the pools a failed start already opened
    throw error;
  }
  // Ready, as GET /health/ready would say: tests query the in-memory dense index as soon as they start.
  if (awaitDenseIndex) await app.get(DenseRecall).warmedUp;
  // The app's own secret: TEST_JWT_SECRET, or the development secret when a test unsets JWT_SECRET.
  const jwt = new JwtService({ secret: config.auth.jwtSecret });
  return {
    app,
    config,
    storage: sessionStorage(app),
    dataSource: app.get(DataSource),
    auth: (userId, claims = {}) => ({
      Authorization: `Bearer ${jwt.sign({ sub: userId, ...claims }, { algorithm: 'HS256', expiresIn: '1h' })}`,
    }),
    listen: async () => {
      applyHttpTimeouts(app, config);
      await app.listen(0, '127.0.0.1');
      return (await app.getUrl()).replace('[::1]', '127.0.0.1');
    },
    close: () => app.close(),
  };
}

let counter = 0;
/** A user id no other test uses, so tests share the database without seeing each other's sessions. */
export function uniqueUser(prefix = 'user'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}
