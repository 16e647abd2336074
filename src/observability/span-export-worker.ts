/**
 * The worker thread that exports the service's spans (WorkerExportSpanProcessor
 * posts them here): the span processors and exporters the standard OTEL_*
 * variables name (OTEL_TRACES_EXPORTER, the OTLP protocol, endpoint and
 * headers, OTEL_BSP_* batching), built as the NodeSDK builds them, so that
 * encoding a batch (protobuf or JSON) and sending it costs the request
 * thread nothing.
 */
import { parentPort } from 'node:worker_threads';
import { diag, DiagConsoleLogger } from '@opentelemetry/api';
import { diagLogLevelFromString, getStringFromEnv } from '@opentelemetry/core';
// sdk-node's own choice of span processors from the environment, which its index does not export.
import { getSpanProcessorsFromEnv } from '@opentelemetry/sdk-node/build/src/utils.js';
import { readableSpans } from './posted-span.js';
import type { ToExportWorker } from './worker-export-span-processor.js';

const logLevel = diagLogLevelFromString(getStringFromEnv('OTEL_LOG_LEVEL'));
if (logLevel !== undefined) diag.setLogger(new DiagConsoleLogger(), { logLevel });

const processors = getSpanProcessorsFromEnv(undefined);

parentPort?.on('message', (message: ToExportWorker) => {
  if (message.kind === 'spans') {
    for (const span of readableSpans(message.batch)) for (const processor of processors) processor.onEnd(span);
    return;
  }
  const settle = message.kind === 'flush' ? (processor: (typeof processors)[number]) => processor.forceFlush() : (processor: (typeof processors)[number]) => processor.shutdown();
  void Promise.all(processors.map(settle)).then(
    () => parentPort?.postMessage({ id: message.id }),
    (error: unknown) => parentPort?.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
