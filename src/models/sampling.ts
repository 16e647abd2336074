/**
 * Per-request sampling a client asked for (the OpenAI-compatible route's
 * `temperature`, `top_p`, `max_tokens`, `stop`). Absent fields keep the
 * provider's defaults.
 */
export interface ModelSampling {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
}

/** A stable key for a sampling (equal settings, equal key). */
export function samplingKey(sampling: ModelSampling): string {
  return JSON.stringify([sampling.temperature ?? null, sampling.topP ?? null, sampling.maxTokens ?? null, sampling.stop ?? null]);
}

/** Builds the main model with a request's sampling (models.module.ts). */
export type SampledModelFactory = (sampling: ModelSampling) => import('@langchain/core/language_models/chat_models').BaseChatModel;
