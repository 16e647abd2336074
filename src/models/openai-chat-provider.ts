import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import type { AppConfig } from '../config/app-config.js';
import type { LocalModelRole } from './local-chat-model.js';
import { modelRetryPolicy, openAIClientFields } from './openai-endpoint.js';
import type { ModelSampling } from './sampling.js';

/** LLM_PROVIDER=openai: any OpenAI-compatible chat endpoint (LLM_BASE_URL, LLM_API_KEY). */
export class OpenAIChatProvider {
  static readonly providerName = 'openai';

  static fromConfig(config: AppConfig, role: LocalModelRole, sampling: ModelSampling = {}): BaseChatModel {
    const llm = config.llm;
    return new ChatOpenAI({
      model: role === 'main' ? llm.model : llm.fastModel,
      ...openAIClientFields({
        baseUrl: llm.baseUrl,
        apiKey: llm.apiKey,
        variables: { provider: 'LLM_PROVIDER', baseUrl: 'LLM_BASE_URL', apiKey: 'LLM_API_KEY' },
      }),
      // The agent enforces LLM_TIMEOUT_MS itself (ModelTimeoutError); the client's own limit is a backstop.
      timeout: llm.timeoutMs + 1000,
      maxRetries: llm.maxRetries,
      onFailedAttempt: modelRetryPolicy,
      temperature: sampling.temperature ?? 0,
      ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
      ...(sampling.maxTokens !== undefined ? { maxTokens: sampling.maxTokens } : {}),
      ...(sampling.stop !== undefined ? { stop: sampling.stop } : {}),
      // Streamed answers ask for the endpoint's token counts too (`usage` of the OpenAI-compatible route).
      streamUsage: true,
    });
  }
}
