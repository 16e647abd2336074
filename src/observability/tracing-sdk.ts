import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { NodeSDK } from '@opentelemetry/sdk-node';
// sdk-node's own reading of OTEL_TRACES_SAMPLER (and its _ARG), which its index does not export: the sampler a
// NodeSDK without one would use, here wrapped (TransactionControlUnrecorded).
import { createSamplerFromEnv } from '@opentelemetry/sdk-node/build/src/create-from-env.js';
import { AlwaysOnSampler, ParentBasedSampler, Sampler, SamplingDecision, SamplingResult, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import { WorkerExportSpanProcessor } from './worker-export-span-processor.js';

/** The service's name in traces when OTEL_SERVICE_NAME does not say otherwise (as in its log lines). */
export const DEFAULT_SERVICE_NAME = 'agentic-rag-chat';

/** Probes (`/health`, `/health/ready`, any `/health…`) and scrapes (`/metrics`): not traced. */
const UNTRACED_PATHS = /^\/(health|metrics(?=[/?]|$))/;

export function untracedRequest(url: string | undefined): boolean {
  return UNTRACED_PATHS.test(url ?? '');
}

/**
 * What is traced besides the service's own spans: HTTP (server and client),
 * Express (the route names: `http.route` and the server span's name, as Nest
 * registers its routes on the Express router; its layers make no spans of
 * their own: a route handler's would only repeat the server span), PostgreSQL and
 * Redis (node-redis for the cache, ioredis for the ingest queue), the last
 * two only inside a traced request or turn (`requireParentSpan`), so queue
 * polling and keep-alives make no traces of their own; pool checkouts and
 * connects are left out (the queries are the operations).
 */
export function instrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (request: IncomingMessage) => untracedRequest(request.url) }),
    // Ignored layers still name the request's route (rpcMetadata.route), which the HTTP span takes.
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER] }),
    // A connection taken from the pool is no operation of its own: its queries are.
    new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    new RedisInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
  ];
}

/**
 * PostgreSQL statements that only open, configure (`SET LOCAL`) or end a
 * transaction, or mark a savepoint, by the pg instrumentation's span name
 * (`pg.query:<first word> <database>`). ROLLBACK is kept: it tells of a failure.
 */
const TRANSACTION_CONTROL = /^pg\.query:(BEGIN|START|COMMIT|END|SET|SAVEPOINT|RELEASE)(\s|$)/;

/**
 * The configured sampler (OTEL_TRACES_SAMPLER), except that transaction
 * control statements are not recorded: a turn runs a transaction or more for
 * every few statements, and their spans (a third of a turn's PostgreSQL spans)
 * said nothing the statements between them and their parent do not, at a
 * measured cost in CPU per turn (docs/benchmarks.md). Their time stays inside
 * their parent's span.
 */
const NOT_RECORDED: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

export class TransactionControlUnrecorded implements Sampler {
  constructor(private readonly delegate: Sampler) {}

  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (spanName.startsWith('pg.query:') && TRANSACTION_CONTROL.test(spanName)) return NOT_RECORDED;
    return this.delegate.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  toString(): string {
    return `TransactionControlUnrecorded{${this.delegate.toString()}}`;
  }
}

/** The sampler the SDK is given: OTEL_TRACES_SAMPLER's (by default parent-based, always on), transaction control left out. */
export function tracingSampler(): Sampler {
  return new TransactionControlUnrecorded(createSamplerFromEnv() ?? new ParentBasedSampler({ root: new AlwaysOnSampler() }));
}

export interface TracingOptions {
  /** Where spans go; unset: what the OTEL_* variables say (OTLP, batched), exported from a worker thread (WorkerExportSpanProcessor). */
  spanProcessors?: SpanProcessor[];
  instrumentations?: Instrumentation[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts the OpenTelemetry SDK for traces only: the exporter, protocol,
 * endpoint, headers, sampler (tracingSampler) and batching come from the standard OTEL_*
 * variables, and spans are encoded and sent from a worker thread; no metrics or logs are exported (NodeSDK would otherwise set up
 * both, to the same endpoint). Returns the SDK, to flush it on shutdown.
 */
export function startTracing(options: TracingOptions = {}): NodeSDK {
  const env = options.env ?? process.env;
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME?.trim() ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
    instrumentations: options.instrumentations ?? instrumentations(),
    spanProcessors: options.spanProcessors ?? [WorkerExportSpanProcessor.start()],
    sampler: tracingSampler(),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return sdk;
}
