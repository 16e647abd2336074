import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AppConfig } from '../config/app-config.js';
import { LocalChatModel, LocalModelRole } from './local-chat-model.js';

/** LLM_PROVIDER=local: the offline, deterministic model (local-chat-model.ts). */
export class LocalChatProvider {
  static readonly providerName = 'local';

  static fromConfig(_config: AppConfig, role: LocalModelRole): BaseChatModel {
    return new LocalChatModel({ role });
  }
}
