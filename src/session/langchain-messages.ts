import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { MessageInfo } from './session.dto.js';

/** Stored messages as the model's LangChain messages. */
export function toLangChainMessages(records: MessageInfo[]): BaseMessage[] {
  return records.map((record) => {
    switch (record.type) {
      case 'human':
        return new HumanMessage(record.content);
      case 'ai':
        return new AIMessage(record.content);
      case 'system':
        return new SystemMessage(record.content);
    }
  });
}
