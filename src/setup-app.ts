import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';
import { bodyParserMessage, bodyParserStatus, buildErrorBody } from './common/http-exception.filter.js';
import { AppConfig } from './config/app-config.js';
import { httpLogging } from './logging/http-logging.js';
import { HitlResumeState, PendingHitlState, RagTrace } from './trace/trace.protocol.js';

export function buildOpenApiDocument(app: INestApplication) {
  const config = new DocumentBuilder()
    .setTitle('Agentic-RAG chat backend')
    .setDescription(
      'Sessions, chat turns (whole or streamed as SSE) and RAG traces. Every /api route needs ' +
        '`Authorization: Bearer <JWT>` (HS256, user id in `sub`). Mint a local token with `npm run token -- <user>`.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .build();
  // HitlResumeState travels inside checkpoints, not responses: listed so clients see the whole protocol.
  return SwaggerModule.createDocument(app, config, { extraModels: [HitlResumeState, PendingHitlState, RagTrace] });
}

/**
 * Everything the app needs besides its modules: body limits, request logging,
 * Swagger. Used by main.ts, the tests and the benches alike, so they run the
 * same app. The app must be created with `bodyParser: false`.
 */
export function setupApp(app: NestExpressApplication, config: AppConfig, logger: PinoLogger): void {
  app.use(httpLogging(logger));
  app.use(express.json({ limit: config.http.bodyLimit }));
  app.use(express.urlencoded({ extended: false, limit: config.http.bodyLimit }));
  // Body-parser failures happen before Nest routing: answer them here in the shared error shape.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = bodyParserStatus(error);
    if (status === undefined) return next(error);
    res.status(status).json(buildErrorBody(status, bodyParserMessage(error, status)));
  });
  app.disable('x-powered-by');
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
}
