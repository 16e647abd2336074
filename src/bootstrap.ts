import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger as PinoLogger } from 'pino';
import { AppModule } from './app.module.js';
import { checkJwks } from './auth/jwks-check.js';
import { checkRedis } from './cache/redis-check.js';
import { TurnDrain } from './chat/turn-drain.service.js';
import { Readiness } from './common/readiness.js';
import { EXIT_CONFIG, StartupFailure } from './common/startup-failure.js';
import { AppConfig, ConfigValidationError, loadConfig } from './config/app-config.js';
import { KNOWN_VARIABLE_NAMES } from './config/environment.js';
import { describeConfiguration } from './config/configuration-summary.js';
import { withTimeout } from './common/with-timeout.js';
import type { EmbeddedPostgres } from './database/embedded-postgres.js';
import { chooseStores } from './embedded-stores.js';
import { loadGlossary } from './common/glossary.js';
import { loadPhrases } from './common/phrases.js';
import { describeEnvFile, EnvFileOutcome } from './config/env-file.js';
import { describeMisspelling, misspelledVariables } from './config/misspelled-variables.js';
import { directDatabaseUrl, throughPooler } from './database/data-source-options.js';
import { checkDatabase } from './database/ensure-database.js';
import { applyPooledSessionDefaults } from './database/pooled-session-defaults.js';
import { createRootLogger, NestPinoLogger, prettyDestination, usesPrettyLogs } from './logging/logger.js';
import { checkModelEndpoint } from './models/model-endpoint-check.js';
import { applyHttpTimeouts, setupApp } from './setup-app.js';
import { stopTracing, tracingEnabled } from './tracing.js';
import { WEB_CLIENT_DIR } from './web-client.module.js';

/** One warning per set variable that looks like a misspelling of one of ours (`LLM_PROVDER`); the OpenTelemetry SDK's own variables count as known. */
function misspellingWarnings(envFile: EnvFileOutcome | undefined): string[] {
  const fromFile = new Set(envFile?.applied ?? []);
  return misspelledVariables(Object.keys(process.env), KNOWN_VARIABLE_NAMES).map((found) => describeMisspelling(found, fromFile.has(found.name) ? '.env' : undefined));
}

/**
 * What the service depends on, checked before the application is built:
 * PostgreSQL (fatal, one line: StartupFailure) and Redis (a warning when it
 * is down); the model endpoint and the identity provider's keys are looked
 * at on the side, their warnings logged when they come.
 */
async function checkDependencies(config: AppConfig, root: PinoLogger): Promise<void> {
  void Promise.all([checkModelEndpoint(config), checkJwks(config)]).then((warnings) => warnings.flat().forEach((line) => root.warn(line)));
  const redisUrl = config.redis.url;
  const [database, redis] = await Promise.all([
    // Past a transaction pooler, PostgreSQL itself first: nothing may reach the pooler before the role's limits are set.
    throughPooler(config.database)
      ? checkDatabase(directDatabaseUrl(config.database), config.database.createIfMissing, 'DATABASE_DIRECT_URL')
      : checkDatabase(config.database.url, config.database.createIfMissing),
    redisUrl === null ? { warning: undefined } : checkRedis(config.redis, redisUrl),
  ]);
  if (database.created) root.info(`created database "${database.created.name}" on PostgreSQL at ${database.created.server} (DATABASE_CREATE_IF_MISSING)`);
  if (throughPooler(config.database)) {
    const pooled = await applyPooledSessionDefaults(config);
    pooled.info.forEach((line) => root.info(line));
    pooled.warnings.forEach((line) => root.warn(line));
  }
  if (redis.warning) root.warn(redis.warning);
}

/** The embedded database this process started, if any: closed on every way out, so its files are left whole. */
let embedded: EmbeddedPostgres | null = null;

/** Closes the embedded database within a short budget (a stuck close must not hold the exit). */
async function stopEmbedded(): Promise<void> {
  const closing = embedded;
  embedded = null;
  if (closing) await withTimeout(closing.stop(), EMBEDDED_STOP_BUDGET_MS, () => new Error('timeout')).catch(() => undefined);
}

const EMBEDDED_STOP_BUDGET_MS = 3000;

/**
 * Starts the service; `envFile` is what main.ts read from `.env` before
 * anything else (tracing's variables may be set there).
 */
async function start(envFile: EnvFileOutcome | undefined): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      process.stderr.write(`${[error.message, ...misspellingWarnings(envFile)].join('\n')}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  const root = createRootLogger(config.logLevel, usesPrettyLogs(config.logFormat, config.nodeEnv) ? prettyDestination() : undefined);
  const logger = new NestPinoLogger(root);
  if (envFile) root.info(describeEnvFile(envFile));
  for (const warning of misspellingWarnings(envFile)) root.warn(warning);

  // The offline components' glossary and phrases take about a second of CPU to read: before any connection is opened (a
  // connection attempt in flight would time out while it blocks), rather than during the first request that needs it.
  loadGlossary();
  loadPhrases();
  const stores = await chooseStores(config);
  embedded = stores.embedded;
  config = stores.config;
  if (stores.line) root.info(stores.line);
  await checkDependencies(config, root);

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger,
    // A failed start-up rejects (and is reported below) instead of aborting the process with a core dump.
    abortOnError: false,
  });
  setupApp(app, config, root);
  applyHttpTimeouts(app, config);
  // Modules initialised (the dense backend chosen) before the summary; listen() then only binds the port.
  await app.init();
  const denseBackend = app.get(Readiness).report().dense_index?.backend;
  root.info(
    describeConfiguration(config, {
      denseBackend: typeof denseBackend === 'string' ? denseBackend : undefined,
      webClientBuilt: existsSync(path.join(WEB_CLIENT_DIR, 'index.html')),
      tracing: tracingEnabled(),
    }),
  );
  await app.listen(config.port, config.host);
  root.info({ port: config.port, host: config.host }, `listening on ${config.host}:${config.port}; Swagger UI at /docs`);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    root.info({ signal }, 'shutting down: no new turns, finishing in-flight requests');
    // At once, whatever other modules do first on closing: new turns are refused from now on.
    app
      .get(TurnDrain)
      .shutdown()
      .catch(() => undefined); // its failure is reported by app.close(), which waits for it too
    const timer = setTimeout(() => {
      root.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting');
      void stopEmbedded().finally(() => process.exit(1));
    }, config.shutdownTimeoutMs);
    timer.unref();
    app
      .close()
      .then(() => stopEmbedded())
      .then(() => stopTracing())
      .then(() => {
        root.info(`shutdown complete: HTTP server, database pool${stores.embedded ? ', embedded database' : ''} and cache closed`);
        process.exit(0);
      })
      .catch((error: unknown) => {
        root.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** Starts the service, or reports why it could not start and exits. */
export function bootstrap(envFile: EnvFileOutcome | undefined): Promise<void> {
  return start(envFile).catch(async (error: unknown) => {
    await stopEmbedded();
    // A dependency that could not be reached or refused the settings: one line, no stack (it is not a bug here).
    if (error instanceof StartupFailure) {
      process.stderr.write(`failed to start: ${error.message}\n`);
      process.exit(error.exitCode);
    }
    process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
