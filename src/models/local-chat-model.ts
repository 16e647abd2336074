import { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, BaseChatModelCallOptions, BaseChatModelParams, BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { AIMessage, AIMessageChunk, BaseMessage, ToolMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { randomUUID } from 'node:crypto';
import { containsCjk } from '../common/text.js';
import { KNOWLEDGE_BUDGET_SPENT, KNOWLEDGE_TOOL_NAME, KnowledgeToolOutput } from '../agent/tools/knowledge/knowledge-tool.constants.js';
import { WEATHER_TOOL_NAME } from '../agent/tools/weather/weather.tool.js';
import { composeFromPassages, composeWeather, summarizeExtractively } from './local-compose.js';
import { detectIntent } from './local-intent.js';

export type LocalModelRole = 'main' | 'fast';

interface LocalChatModelFields extends BaseChatModelParams {
  role?: LocalModelRole;
  toolNames?: string[];
}

type Reply = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: Record<string, unknown> };

function textOf(message: BaseMessage): string {
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Splits an answer into streaming pieces: words for Latin text, pairs of characters for Chinese. */
export function streamPieces(text: string): string[] {
  return text.match(/[\u3400-\u9fff\uf900-\ufaff]{1,2}|[^\s\u3400-\u9fff\uf900-\ufaff]+\s*|\s+/g) ?? [];
}

/**
 * The offline, deterministic chat model (LLM_PROVIDER=local). It does not
 * understand language: it routes by rules (greeting, weather, everything else
 * to the knowledge base), calls the bound tools, and composes answers by
 * extracting the sentences of the tool results that share most words with
 * the question, citing their sources. Same input, same output.
 */
export class LocalChatModel extends BaseChatModel<BaseChatModelCallOptions, AIMessageChunk> {
  readonly role: LocalModelRole;
  readonly toolNames: string[];

  constructor(fields: LocalChatModelFields = {}) {
    super(fields);
    this.role = fields.role ?? 'main';
    this.toolNames = fields.toolNames ?? [];
  }

  static lc_name(): string {
    return 'LocalChatModel';
  }

  _llmType(): string {
    return 'local-extractive';
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<BaseChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions> {
    const names = tools.map((t) => ('name' in t && typeof t.name === 'string' ? t.name : (t as { function?: { name?: string } }).function?.name ?? ''));
    const bound = new LocalChatModel({ role: this.role, toolNames: names.filter(Boolean) });
    return kwargs ? bound.withConfig(kwargs) : bound;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const reply = this.reply(messages);
    const message =
      reply.kind === 'text'
        ? new AIMessage(reply.text)
        : new AIMessage({ content: '', tool_calls: [{ id: `call_${randomUUID()}`, name: reply.name, args: reply.args, type: 'tool_call' }] });
    return { generations: [{ text: reply.kind === 'text' ? reply.text : '', message }] };
  }

  async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const reply = this.reply(messages);
    if (reply.kind === 'tool') {
      const chunk = new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          tool_call_chunks: [{ id: `call_${randomUUID()}`, name: reply.name, args: JSON.stringify(reply.args), index: 0, type: 'tool_call_chunk' }],
        }),
      });
      yield chunk;
      return;
    }
    for (const piece of streamPieces(reply.text)) {
      if (options.signal?.aborted) break;
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
  }

  private reply(messages: BaseMessage[]): Reply {
    const lastHumanIndex = messages.map((m) => m.getType()).lastIndexOf('human');
    const question = lastHumanIndex >= 0 ? textOf(messages[lastHumanIndex]) : '';
    if (this.role === 'fast') return { kind: 'text', text: summarizeExtractively(question) };

    const toolResults = messages.slice(lastHumanIndex + 1).filter((m): m is ToolMessage => m.getType() === 'tool');
    if (toolResults.length > 0) return { kind: 'text', text: this.composeFromTools(question, toolResults) };

    const zh = containsCjk(question);
    const intent = detectIntent(question);
    switch (intent.kind) {
      case 'greeting':
        return {
          kind: 'text',
          text: zh
            ? '你好！我可以在知识库（产品手册、政策等）中查找答案，也可以查询天气。'
            : 'Hello! I can look things up in the knowledge base (manuals, policies) or check the weather for you.',
        };
      case 'thanks':
        return { kind: 'text', text: zh ? '不客气！还有什么可以帮你？' : "You're welcome! Anything else?" };
      case 'weather':
        if (!this.toolNames.includes(WEATHER_TOOL_NAME)) break;
        if (!intent.location) {
          return { kind: 'text', text: zh ? '请告诉我想查询哪个城市的天气。' : 'Which city should I check the weather for?' };
        }
        return { kind: 'tool', name: WEATHER_TOOL_NAME, args: { location: intent.location } };
      case 'question':
        if (this.toolNames.includes(KNOWLEDGE_TOOL_NAME)) return { kind: 'tool', name: KNOWLEDGE_TOOL_NAME, args: { query: question } };
        break;
    }
    return {
      kind: 'text',
      text: zh
        ? '我是离线的本地模型，只能根据知识库和天气工具回答，这条消息没有合适的工具可用。'
        : 'I am the offline local model: I answer from the knowledge base and the weather tool, and neither fits this message.',
    };
  }

  private composeFromTools(question: string, results: ToolMessage[]): string {
    return results
      .map((result) => {
        const content = textOf(result);
        if (result.name === KNOWLEDGE_TOOL_NAME) {
          if (content === KNOWLEDGE_BUDGET_SPENT) return content;
          try {
            const output = JSON.parse(content) as KnowledgeToolOutput;
            // The tool's query includes the user's clarifications, when there were any.
            return composeFromPassages(output.query || question, output.chunks ?? []);
          } catch {
            return content;
          }
        }
        if (result.name === WEATHER_TOOL_NAME) return composeWeather(question, content);
        return `${result.name}: ${content.slice(0, 1000)}`;
      })
      .join('\n\n');
  }
}
