import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { IncomingMessage } from 'node:http';

/** The service's name in traces when OTEL_SERVICE_NAME does not say otherwise (as in its log lines). */
export const DEFAULT_SERVICE_NAME = 'agentic-rag-chat';

/** Probes (`/health`, `/health/ready`, any `/health…`) and scrapes (`/metrics`): not traced. */
const UNTRACED_PATHS = /^\/(health|metrics(?=[/?]|$))/;

export function untracedRequest(url: string | undefined): boolean {
  return UNTRACED_PATHS.test(url ?? '');
}

/**
 * What is traced besides the service's own spans: HTTP (server and client),
 * Express (the route names: `http.route`, as Nest registers its routes on
 * the Express router; its middleware layers are left out), PostgreSQL and
 * Redis (node-redis for the cache, ioredis for the ingest queue), the last
 * two only inside a traced request or turn (`requireParentSpan`), so queue
 * polling and keep-alives make no traces of their own; pool checkouts and
 * connects are left out (the queries are the operations).
 */
export function instrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (request: IncomingMessage) => untracedRequest(request.url) }),
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
    // A connection taken from the pool is no operation of its own: its queries are.
    new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    new RedisInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
  ];
}

export interface TracingOptions {
  /** Where spans go; unset: what the OTEL_* variables say (OTLP, batched). */
  spanProcessors?: SpanProcessor[];
  instrumentations?: Instrumentation[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts the OpenTelemetry SDK for traces only: the exporter, protocol,
 * endpoint, headers, sampler and batching come from the standard OTEL_*
 * variables; no metrics or logs are exported (NodeSDK would otherwise set up
 * both, to the same endpoint). Returns the SDK, to flush it on shutdown.
 */
export function startTracing(options: TracingOptions = {}): NodeSDK {
  const env = options.env ?? process.env;
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME?.trim() ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
    instrumentations: options.instrumentations ?? instrumentations(),
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return sdk;
}
