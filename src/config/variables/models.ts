/** The model providers: chat model, embeddings, reranker. */
import { z } from 'zod';
import { httpUrl, integer, oneOf } from './values.js';

/**
 * The names each `*_PROVIDER` variable accepts. Each provider registry
 * (src/models/chat-model-registry.ts, src/knowledge/index/embedding-registry.ts,
 * src/knowledge/retrieval/rerank-registry.ts) is checked against its list when it is
 * built, so a name here without a provider class, or a class without a name
 * here, stops the service at start-up.
 */
export const LLM_PROVIDERS = ['local', 'openai'] as const;
export const EMBEDDING_PROVIDERS = ['local', 'openai'] as const;
export const RERANK_PROVIDERS = ['local', 'http', 'none'] as const;

export const llm = {
  LLM_PROVIDER: oneOf(LLM_PROVIDERS).default('local').describe('chat model provider'),
  LLM_BASE_URL: httpUrl().optional().describe('base URL of the OpenAI-compatible API'),
  LLM_API_KEY: z.string().optional().describe('its API key; with openai, this or LLM_BASE_URL is required'),
  LLM_MODEL: z.string().default('gpt-4o-mini').describe('main model (answers, tool calls)'),
  LLM_FAST_MODEL: z
    .string()
    .optional()
    .describe('fast model (summaries and the complexity, grading and rewrite judgements); unset: LLM_MODEL')
    .meta({ readmeDefault: 'LLM_MODEL' }),
  LLM_TIMEOUT_MS: integer(100, 600000).default(60000).describe('longest wait for one model call'),
  LLM_MAX_RETRIES: integer(0, 10).default(2).describe('retries of a failed model call'),
  LLM_JUDGE_TIMEOUT_MS: integer(100, 600000)
    .default(10000)
    .describe('longest wait for one judgement of the fast model (complexity, grading, rewrite) before the local judge answers'),
};

export const embeddings = {
  EMBEDDING_PROVIDER: oneOf(EMBEDDING_PROVIDERS).default('local').describe('embeddings provider'),
  EMBEDDING_BASE_URL: httpUrl().optional().describe('base URL of the OpenAI-compatible embeddings API; unset: LLM_BASE_URL').meta({ readmeDefault: 'LLM_BASE_URL' }),
  EMBEDDING_API_KEY: z.string().optional().describe('its API key; unset: LLM_API_KEY; with openai, a base URL or a key is required').meta({ readmeDefault: 'LLM_API_KEY' }),
  EMBEDDING_MODEL: z.string().default('text-embedding-3-small').describe('embeddings model for openai'),
  EMBEDDING_DIMENSIONS: integer(16, 4096).default(256).describe('vector size'),
};

export const rerank = {
  RERANK_PROVIDER: oneOf(RERANK_PROVIDERS).default('local').describe('reranker; none skips reranking'),
  RERANK_URL: httpUrl('an http(s) URL of a /rerank endpoint').optional().describe('the rerank endpoint, required with http'),
  RERANK_MODEL: z.string().default('jina-reranker-v2-base-multilingual').describe('model name sent to the rerank API'),
  RERANK_API_KEY: z.string().optional().describe('bearer key for the rerank API'),
  RERANK_TIMEOUT_MS: integer(50, 60000).default(3000).describe('longest wait for the reranker'),
};
