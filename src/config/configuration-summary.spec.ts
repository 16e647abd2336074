import { loadConfig } from './app-config.js';
import { describeConfiguration } from './configuration-summary.js';

describe('describeConfiguration (the start-up line)', () => {
  it('names the offline defaults', () => {
    expect(describeConfiguration(loadConfig({}), { denseBackend: 'memory', webClientBuilt: true })).toBe(
      'running with model local (offline, extractive); embeddings local (256 dimensions); reranker local; dense backend memory (RAG_DENSE_BACKEND=auto); web client at /',
    );
  });

  it('names endpoints by host and port only: no key, no credentials, no path', () => {
    const config = loadConfig({
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: 'http://user:pass@127.0.0.1:8000/v1?token=abc',
      LLM_API_KEY: 'sk-secret-key',
      LLM_MODEL: 'qwen2.5-7b',
      LLM_FAST_MODEL: 'qwen2.5-1.5b',
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: 'https://embed.example.com/v1',
      EMBEDDING_MODEL: 'bge-m3',
      EMBEDDING_DIMENSIONS: '1024',
      RERANK_PROVIDER: 'http',
      RERANK_URL: 'http://rerank:9000/rerank',
      RERANK_API_KEY: 'rerank-secret',
      RAG_DENSE_BACKEND: 'pgvector',
      WEB_CLIENT_ENABLED: 'false',
    });
    const line = describeConfiguration(config, { denseBackend: 'pgvector', webClientBuilt: true });
    expect(line).toBe(
      'running with model openai at 127.0.0.1:8000 (main qwen2.5-7b, fast qwen2.5-1.5b); embeddings openai at embed.example.com (bge-m3, 1024 dimensions); ' +
        'reranker http at rerank:9000 (jina-reranker-v2-base-multilingual); dense backend pgvector; web client off',
    );
    expect(line).not.toMatch(/secret|pass|token|sk-/);
  });

  it('with tracing on, where traces go: host and port, protocol, whether headers are sent, never their values', () => {
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://pk:sk@cloud.langfuse.com/api/public/otel',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20c2VjcmV0',
      OTEL_GENAI_CAPTURE_CONTENT: 'true',
    });
    const line = describeConfiguration(config, { denseBackend: 'memory', webClientBuilt: true, tracing: true });
    expect(line).toMatch(/; traces to cloud\.langfuse\.com \(OTLP http\/protobuf, with headers\) as agentic-rag-chat, message content included$/);
    expect(line).not.toMatch(/c2VjcmV0|pk:sk|Basic/);
    const phoenix = loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://localhost:6006/v1/traces', OTEL_TRACES_EXPORTER: 'otlp,console', OTEL_SERVICE_NAME: 'chat-eu' });
    expect(describeConfiguration(phoenix, { webClientBuilt: true, tracing: true })).toMatch(/; traces to localhost:6006 \(OTLP http\/protobuf\) and console as chat-eu$/);
    expect(describeConfiguration(config, { webClientBuilt: true, tracing: false })).not.toMatch(/traces/);
  });

  it('says when the public OpenAI API is used, and when the web client is not built', () => {
    const config = loadConfig({ LLM_PROVIDER: 'openai', LLM_API_KEY: 'sk-x', RERANK_PROVIDER: 'none' });
    expect(describeConfiguration(config, { webClientBuilt: false })).toBe(
      'running with model openai at api.openai.com (main gpt-4o-mini, fast gpt-4o-mini); embeddings local (256 dimensions); reranker none; dense backend auto; web client not built (npm run build)',
    );
  });
});
