import { AsyncCaller, type FailedAttemptHandler } from '@langchain/core/utils/async_caller';
import { ConfigValidationError } from '../config/app-config.js';
import { isHopelessModelFailure } from './model-errors.js';

/** Where an OpenAI-compatible client sends its calls, and the variables that say so (for errors). */
export interface OpenAIEndpoint {
  baseUrl?: string;
  apiKey?: string;
  variables: { provider: string; baseUrl: string; apiKey: string };
}

/**
 * The key sent to a keyless endpoint (a local vLLM or Ollama server): the
 * OpenAI client refuses to start without one. It is only ever sent to a base
 * URL the configuration names, never to the public OpenAI host.
 */
const KEYLESS_ENDPOINT_KEY = 'not-needed';

/**
 * `apiKey` and `configuration` for `ChatOpenAI` / `OpenAIEmbeddings`. With
 * neither a base URL nor a key there is nothing sane to call: loadConfig
 * already refuses that environment, and a hand-built configuration is
 * refused here the same way.
 */
export function openAIClientFields(endpoint: OpenAIEndpoint): { apiKey: string; configuration?: { baseURL: string } } {
  const { baseUrl, apiKey, variables } = endpoint;
  if (!baseUrl && !apiKey) {
    throw new ConfigValidationError([
      {
        variable: variables.apiKey,
        message: `required when ${variables.provider}=openai (or set ${variables.baseUrl} for a keyless local endpoint)`,
      },
    ]);
  }
  return { apiKey: apiKey ?? KEYLESS_ENDPOINT_KEY, ...(baseUrl ? { configuration: { baseURL: baseUrl } } : {}) };
}

/** LangChain's own decision on a failed attempt (statuses not worth retrying, rate limits); it is not exported on its own. */
const langChainRetryDecision = (new AsyncCaller({}) as unknown as { onFailedAttempt: FailedAttemptHandler }).onFailedAttempt;

/**
 * `onFailedAttempt` for LangChain's OpenAI clients: LangChain's decision,
 * except that a refused connection or an unknown host is not tried again
 * (isHopelessModelFailure): with LLM_MAX_RETRIES=2 its backoffs made a dead
 * endpoint fail after about 5 s instead of at once.
 */
export const modelRetryPolicy: FailedAttemptHandler = (error: unknown) => {
  if (isHopelessModelFailure(error)) throw error;
  return langChainRetryDecision(error);
};
