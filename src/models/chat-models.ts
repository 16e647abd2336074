import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import type { AppConfig } from '../config/app-config.js';
import { LocalChatModel, LocalModelRole } from './local-chat-model.js';

export { FAST_MODEL, MAIN_MODEL } from './model-tokens.js';

/** Builds the model for a role from LLM_PROVIDER: `local` (offline) or `openai` (any compatible endpoint). */
export function createChatModel(config: AppConfig, role: LocalModelRole): BaseChatModel {
  const llm = config.llm;
  if (llm.provider === 'local') return new LocalChatModel({ role });
  return new ChatOpenAI({
    model: role === 'main' ? llm.model : llm.fastModel,
    apiKey: llm.apiKey ?? 'not-needed',
    configuration: llm.baseUrl ? { baseURL: llm.baseUrl } : undefined,
    // The agent enforces LLM_TIMEOUT_MS itself (ModelTimeoutError); the client's own limit is a backstop.
    timeout: llm.timeoutMs + 1000,
    maxRetries: llm.maxRetries,
    temperature: 0,
    streamUsage: false,
  });
}
