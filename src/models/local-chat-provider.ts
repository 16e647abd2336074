import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AppConfig } from '../config/app-config.js';
import { LocalChatModel, LocalModelRole } from './local-chat-model.js';
import type { ModelSampling } from './sampling.js';

/** LLM_PROVIDER=local: the offline, deterministic model (local-chat-model.ts). */
export class LocalChatProvider {
  static readonly providerName = 'local';

  /** The local model is deterministic: of a sampling it honours `max_tokens` and `stop`, not `temperature` or `top_p`. */
  static fromConfig(_config: AppConfig, role: LocalModelRole, sampling?: ModelSampling): BaseChatModel {
    return new LocalChatModel({ role, maxTokens: sampling?.maxTokens, stop: sampling?.stop });
  }
}
