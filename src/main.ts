import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { TurnDrain } from './chat/turn-drain.service.js';
import { AppConfig, ConfigValidationError, loadConfig } from './config/app-config.js';
import { ensureDatabase } from './database/ensure-database.js';
import { createRootLogger, NestPinoLogger } from './logging/logger.js';
import { applyHttpTimeouts, setupApp } from './setup-app.js';

async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const root = createRootLogger(config.logLevel);
  const logger = new NestPinoLogger(root);

  if (config.database.createIfMissing && (await ensureDatabase(config.database.url))) {
    root.info('created database named in DATABASE_URL');
  }

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger,
  });
  setupApp(app, config, root);
  applyHttpTimeouts(app, config);
  await app.listen(config.port, config.host);
  root.info({ port: config.port, host: config.host }, `listening; Swagger UI at /docs`);

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
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    app
      .close()
      .then(() => {
        root.info('shutdown complete: HTTP server, database pool and cache closed');
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

bootstrap().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
