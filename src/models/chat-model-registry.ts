import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ProviderRegistry } from '../common/provider-registry.js';
import { LLM_PROVIDERS } from '../config/app-config.js';
import type { LocalModelRole } from './local-chat-model.js';
import type { ModelSampling } from './sampling.js';
import { LocalChatProvider } from './local-chat-provider.js';
import { OpenAIChatProvider } from './openai-chat-provider.js';

/** Which model a role gets: `main` (answers, tool calls) or `fast` (summaries, grading). */
export type ChatModelRole = LocalModelRole;

/** The chat model provider classes: add a provider's class here (and its name to LLM_PROVIDERS). */
export const CHAT_MODEL_PROVIDER_CLASSES = [LocalChatProvider, OpenAIChatProvider] as const;

/**
 * The chat model providers, chosen by LLM_PROVIDER. `sampling`, when given,
 * is a request's temperature, top_p, max_tokens and stop for that model.
 */
export const CHAT_MODEL_PROVIDERS = new ProviderRegistry<BaseChatModel, [role: ChatModelRole, sampling?: ModelSampling]>({
  variable: 'LLM_PROVIDER',
  select: (config) => config.llm.provider,
  accepted: LLM_PROVIDERS,
  providers: CHAT_MODEL_PROVIDER_CLASSES,
});
