import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AppConfig } from '../config/app-config.js';
import { CHAT_MODEL_PROVIDERS, ChatModelRole } from './chat-model-registry.js';
import type { ModelSampling } from './sampling.js';

export { CHAT_MODEL_PROVIDERS } from './chat-model-registry.js';
export type { ChatModelRole } from './chat-model-registry.js';
export { FAST_MODEL, MAIN_MODEL, SAMPLED_MAIN_MODEL } from './model-tokens.js';
export type { ModelSampling, SampledModelFactory } from './sampling.js';

/** Builds the model for a role from the provider LLM_PROVIDER names (see chat-model-registry.ts). */
export function createChatModel(config: AppConfig, role: ChatModelRole, sampling?: ModelSampling): BaseChatModel {
  return CHAT_MODEL_PROVIDERS.create(config, role, sampling);
}

/**
 * The provider and model a role's calls go to, as traces name them
 * (gen_ai.provider.name, gen_ai.request.model): the offline model is `local`.
 */
export function modelIdentity(llm: AppConfig['llm'], role: ChatModelRole): { provider: string; model: string } {
  if (llm.provider === 'local') return { provider: 'local', model: 'local' };
  return { provider: llm.provider, model: role === 'main' ? llm.model : llm.fastModel };
}
