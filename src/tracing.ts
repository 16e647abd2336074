/**
 * The tracing entry, loaded by main.ts before any module of the application
 * (ES modules are linked before any of their code runs, so a first import in
 * the application itself would come too late to instrument Express, pg and
 * Redis). With tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_TRACES_EXPORTER, or OTEL_SDK_DISABLED=true) it loads nothing.
 *
 * On, it registers the import-in-the-middle loader hook (for the ES modules
 * of the instrumented packages only) and starts the SDK (observability/tracing-sdk.ts).
 * `node --import @opentelemetry/instrumentation/hook.mjs` would not register
 * the hook on Node 20 (opentelemetry-js #4933), `module.register` does.
 */
import { register } from 'node:module';
import { INSTRUMENTED_MODULES, tracingRequested } from './observability/tracing-switch.js';

let flush: (() => Promise<void>) | undefined;

if (tracingRequested(process.env)) {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: INSTRUMENTED_MODULES } });
  const { startTracing } = await import('./observability/tracing-sdk.js');
  const sdk = startTracing();
  flush = () => sdk.shutdown();
}

/** Exports the spans still buffered and stops the SDK (at shutdown); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  await flush?.().catch(() => undefined);
}

export const tracingEnabled = (): boolean => flush !== undefined;
