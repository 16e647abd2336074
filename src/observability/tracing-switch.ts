/**
 * Whether this process exports traces. Off unless an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT, or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or an exporter (OTEL_TRACES_EXPORTER,
 * other than `none`) is named; OTEL_SDK_DISABLED=true turns it off whatever
 * else is set. Off, the OpenTelemetry SDK is never loaded.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.length > 0) return exporters.some((name) => name !== 'none');
  return set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
}

/**
 * The packages (and built-ins) the ESM loader hook wraps for the
 * instrumentations: only these, so that the rest of the application loads
 * unwrapped (import-in-the-middle's `include`).
 */
export const INSTRUMENTED_MODULES = ['http', 'https', 'express', 'pg', 'pg-pool', '@redis/client', 'ioredis'];
