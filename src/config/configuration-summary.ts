import type { AppConfig } from './app-config.js';

/** What start-up found out beyond the settings: the dense backend `auto` chose, and whether the web client is built. */
export interface ResolvedParts {
  /** `memory` or `pgvector`; undefined when not known. */
  denseBackend?: string;
  /** Whether web/dist holds a build. */
  webClientBuilt: boolean;
  /** Whether this process exports traces (src/tracing.ts started the SDK). */
  tracing?: boolean;
}

/** host:port of an endpoint URL, never its credentials, path or query. */
function endpointHost(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * The one start-up line that says what this instance runs on: the chat
 * model's provider, endpoint host and models, the embeddings, the reranker,
 * the dense backend and the web client. Hosts only: no keys, no URLs (a URL
 * may carry credentials).
 */
export function describeConfiguration(config: AppConfig, resolved: ResolvedParts): string {
  const { llm, embeddings, rerank, dense } = config;
  const model =
    llm.provider === 'local'
      ? 'model local (offline, extractive)'
      : `model ${llm.provider} at ${llm.baseUrl ? endpointHost(llm.baseUrl) : 'api.openai.com'} (main ${llm.model}, fast ${llm.fastModel})`;
  const embedder =
    embeddings.provider === 'local'
      ? `embeddings local (${embeddings.dimensions} dimensions)`
      : `embeddings ${embeddings.provider} at ${embeddings.baseUrl ? endpointHost(embeddings.baseUrl) : 'api.openai.com'} (${embeddings.model}, ${embeddings.dimensions} dimensions)`;
  const reranker = rerank.provider === 'http' && rerank.url ? `reranker http at ${endpointHost(rerank.url)} (${rerank.model})` : `reranker ${rerank.provider}`;
  const denseBackend =
    resolved.denseBackend && resolved.denseBackend !== dense.backend
      ? `dense backend ${resolved.denseBackend} (RAG_DENSE_BACKEND=${dense.backend})`
      : `dense backend ${resolved.denseBackend ?? dense.backend}`;
  const webClient = !config.webClientEnabled ? 'web client off' : resolved.webClientBuilt ? 'web client at /' : 'web client not built (npm run build)';
  return `running with ${model}; ${embedder}; ${reranker}; ${denseBackend}; ${webClient}${resolved.tracing ? `; ${describeTracing(config.tracing)}` : ''}`;
}

/** Where traces go: `traces to collector:4318 (OTLP http/protobuf, with headers) as agentic-rag-chat`; never the headers' values. */
function describeTracing(tracing: AppConfig['tracing']): string {
  const exporters = (tracing.exporter ?? 'otlp')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name && name !== 'none');
  const otlp = exporters.includes('otlp')
    ? `${tracing.endpoint ? endpointHost(tracing.endpoint) : 'localhost:4318'} (OTLP ${tracing.protocol}${tracing.withHeaders ? ', with headers' : ''})`
    : undefined;
  const others = exporters.filter((name) => name !== 'otlp');
  return `traces to ${[otlp, ...others].filter(Boolean).join(' and ')} as ${tracing.serviceName}${tracing.captureContent ? ', message content included' : ''}`;
}
