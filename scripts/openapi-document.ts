import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../src/app.module.js';
import { loadConfig } from '../src/config/app-config.js';
import { buildOpenApiDocument } from '../src/setup-app.js';

/**
 * The OpenAPI document the app serves at /docs-json, built without listening
 * and without PostgreSQL or Redis: Nest's preview mode reads the modules and
 * their routes but instantiates no provider, so nothing connects. The default
 * configuration is used, so the environment cannot change the document: that
 * of development, so the development-only POST /api/dev/token is in it (the
 * web client's "sign in as" calls it through the typed client).
 */
export async function buildOfflineOpenApiDocument(): Promise<OpenAPIObject> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(loadConfig({ WEB_CLIENT_ENABLED: 'false' })), {
    preview: true,
    bodyParser: false,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
