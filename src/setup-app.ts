import type { Server } from 'node:http';
import { INestApplication } from '@nestjs/common';
import type { CorsOptions } from '@nestjs/common/interfaces/external/cors-options.interface.js';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';
import { ERROR_CODES } from './common/coded-error.js';
import { SAME_ORIGIN_PAGE_POLICY } from './common/page-policy.js';
import { bodyParserCode, bodyParserMessage, bodyParserStatus, buildErrorBody, errorBodyFor, undecompressableBodyMessage } from './common/http-exception.filter.js';
import { AppConfig } from './config/app-config.js';
import { httpLogging } from './logging/http-logging.js';
import { setContentCapture } from './observability/content-capture.js';
import { httpMetrics } from './observability/http-metrics.js';
import { Metrics } from './observability/metrics.js';
import { TRACEPARENT_HEADER, traceparentHeader } from './observability/trace-context.js';
import { HitlResumeState, PendingHitlState, RagTrace } from './trace/trace.protocol.js';

export function buildOpenApiDocument(app: INestApplication) {
  const config = new DocumentBuilder()
    .setTitle('Agentic-RAG chat backend')
    .setDescription(
      'Sessions, chat turns (whole or streamed as SSE) and RAG traces. Every /api route needs ' +
        "`Authorization: Bearer <JWT>` (HS256, user id in `sub`); a run's stream also takes `?ticket=` (a stream ticket, for EventSource). " +
        'Mint a local token with `npm run token -- <user>`.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .build();
  // HitlResumeState travels inside checkpoints, not responses: listed so clients see the whole protocol.
  const document = SwaggerModule.createDocument(app, config, { extraModels: [HitlResumeState, PendingHitlState, RagTrace] });
  // The table of error codes, for clients to generate theirs from (clients/typescript/src/error-codes.ts).
  return Object.assign(document, { 'x-error-codes': ERROR_CODES });
}

/**
 * Everything the app needs besides its modules: body limits, request logging,
 * Swagger. Used by main.ts, the tests and the benches alike, so they run the
 * same app. The app must be created with `bodyParser: false`.
 */
export function setupApp(app: NestExpressApplication, config: AppConfig, logger: PinoLogger): void {
  setContentCapture(config.tracing.captureContent);
  // First: every request is timed, those refused before routing too.
  app.use(httpMetrics(app.get(Metrics)));
  app.use(traceparentHeader);
  app.use(httpLogging(logger));
  // After the request log, so preflights are logged and carry x-request-id too.
  const cors = corsOptions(config.http.corsOrigins);
  if (cors) app.enableCors(cors);
  app.use(express.json({ limit: config.http.bodyLimit }));
  app.use(express.urlencoded({ extended: false, limit: config.http.bodyLimit }));
  app.use(rejectHostileShapes);
  // Body-parser failures happen before Nest routing: answer them here in the shared error shape.
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const undecompressable = undecompressableBodyMessage(error, req.headers['content-encoding']);
    if (undecompressable) return res.status(400).json(errorBodyFor(req.path, buildErrorBody(400, undecompressable), error));
    const status = bodyParserStatus(error);
    if (status === undefined) return next(error);
    res.status(status).json(errorBodyFor(req.path, buildErrorBody(status, bodyParserMessage(error, status), bodyParserCode(error, status)), error));
  });
  app.disable('x-powered-by');
  app.use(DOCUMENTATION_PATHS, documentationHeaders);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
}

/** The Swagger UI and its assets, and the OpenAPI document in JSON and YAML (path prefixes, matched as Express routes them). */
const DOCUMENTATION_PATHS = ['/docs', '/docs-json', '/docs-yaml'];

/** The documentation is never framed, sniffed, or told where its links lead from. */
function documentationHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', SAME_ORIGIN_PAGE_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}

/**
 * CORS for browsers on the listed origins (`CORS_ORIGINS`; none: CORS off,
 * so no Access-Control-* header is ever sent). A request from an origin not
 * listed gets no `Access-Control-Allow-Origin`, so the browser refuses it.
 * No cookies are used (bearer tokens and stream tickets), so credentials
 * stay off and `*` is possible outside production.
 */
export function corsOptions(origins: readonly string[]): CorsOptions | undefined {
  if (origins.length === 0) return undefined;
  return {
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
    // X-Api-Key, X-Auth-Scheme, Prefer and Accept: the LangGraph SDK's headers (/langgraph); Mcp-*: the MCP SDK's (/mcp).
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID', 'X-Request-ID', 'X-Api-Key', 'X-Auth-Scheme', 'Prefer', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id'],
    // Content-Location names a LangGraph run (useStream learns its id from it); Location is where its stream resumes.
    // traceparent: the request's trace, when tracing is on. WWW-Authenticate names /mcp's protected-resource metadata;
    // Mcp-Session-Id is the MCP SDK's (the server is stateless: never sent).
    exposedHeaders: [
      'X-Request-ID',
      'Retry-After',
      'Content-Location',
      'Location',
      'X-Pagination-Total',
      'X-Pagination-Next',
      TRACEPARENT_HEADER,
      'WWW-Authenticate',
      'Mcp-Session-Id',
    ],
    optionsSuccessStatus: 204,
    maxAge: 600,
  };
}

/** Deeper request bodies are refused: no request of this API nests more than a few levels. */
export const MAX_BODY_DEPTH = 32;

/**
 * Keys class-transformer drops without a word (`__proto__`, `constructor`),
 * so the unknown-field check never sees them, or that name prototypes.
 */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

interface ShapeNode {
  value: object;
  depth: number;
  parent: ShapeNode | null;
  step: string;
}

function pathOf(node: ShapeNode | null): string {
  const steps: string[] = [];
  for (let at = node; at?.parent; at = at.parent) steps.push(at.step);
  return steps.reverse().join('').replace(/^\./, '');
}

/**
 * Why a parsed body (or query) must be refused, or null: nesting deeper than
 * `maxDepth` (class-transformer and class-validator recurse, and a few
 * thousand levels overflow the stack: a 500), or a forbidden key anywhere.
 * Walks the value with an explicit stack, never by recursion.
 */
export function bodyShapeProblem(root: unknown, maxDepth = MAX_BODY_DEPTH): string | null {
  if (root === null || typeof root !== 'object') return null;
  const stack: ShapeNode[] = [{ value: root, depth: 1, parent: null, step: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.depth > maxDepth) {
      let top = node;
      while (top.parent?.parent) top = top.parent;
      return `Request body is nested deeper than ${maxDepth} levels (in ${top.step.startsWith('.') ? `property ${top.step.slice(1)}` : top.step})`;
    }
    const depth = node.depth + 1;
    if (Array.isArray(node.value)) {
      const items: unknown[] = node.value;
      for (let index = 0; index < items.length; index += 1) {
        const item = items[index];
        if (item !== null && typeof item === 'object') stack.push({ value: item, depth, parent: node, step: `[${index}]` });
      }
      continue;
    }
    const fields = node.value as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (FORBIDDEN_KEYS.has(key)) {
        const where = pathOf(node);
        return `property ${key} should not exist${where ? ` (in ${where})` : ''}`;
      }
      const child = fields[key];
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth, parent: node, step: `.${key}` });
    }
  }
  return null;
}

/** Refuses, in the shared error shape, a body or query that `bodyShapeProblem` objects to. */
function rejectHostileShapes(req: Request, res: Response, next: NextFunction): void {
  const problem = bodyShapeProblem(req.body) ?? bodyShapeProblem(req.query);
  if (!problem) return next();
  res.status(400).json(errorBodyFor(req.path, buildErrorBody(400, problem)));
}

/**
 * Bounds how long a client may take to send its request (headers, then the
 * whole request), so a slow or stalled client cannot hold a socket for Node's
 * 300 s default. Only receiving the request counts: a long response (an SSE
 * stream) is not cut. Call before `listen`: Node checks for expired requests
 * on an interval (30 s by default) that it starts when listening; it is
 * shortened here so the limits hold to within a second.
 */
export function applyHttpTimeouts(app: INestApplication, config: AppConfig): void {
  const server = app.getHttpServer() as Server & { connectionsCheckingInterval: number };
  server.requestTimeout = config.http.requestTimeoutMs;
  server.headersTimeout = config.http.headersTimeoutMs;
  server.connectionsCheckingInterval = Math.min(1000, Math.max(100, Math.floor(config.http.headersTimeoutMs / 4)));
}
