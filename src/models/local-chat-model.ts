import { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, BaseChatModelCallOptions, BaseChatModelParams, BindToolsInput } from '@langchain/core/language_models/chat_models';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { AIMessage, AIMessageChunk, BaseMessage, ToolMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { randomUUID } from 'node:crypto';
import { clip, containsCjk } from '../common/text.js';
import { standardForm } from '../common/standard-form.js';
import { summarizeExtractively } from './local-compose.js';
import { truncateToTokens } from './token-estimate.js';
import { detectSmallTalk } from './local-intent.js';
import { isLocalToolRouting, LOCAL_ROUTING_KEY, LocalAnswer, LocalToolRouting } from './local-tool-routing.js';

export type LocalModelRole = 'main' | 'fast';

/** A tool the model is bound to, with its routing hint when it has one. */
export interface LocalBoundTool {
  name: string;
  routing?: LocalToolRouting;
}

interface LocalChatModelFields extends BaseChatModelParams {
  role?: LocalModelRole;
  tools?: LocalBoundTool[];
  /** A request's token limit for an answer (counted with the o200k_base tokenizer). */
  maxTokens?: number;
  /** A request's stop sequences: an answer ends before the first. */
  stop?: string[];
}

type Reply = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: Record<string, unknown> };

/** Why an answer ended, as OpenAI's `finish_reason` says it. */
type FinishReason = 'stop' | 'length' | 'tool_calls';

function textOf(message: BaseMessage): string {
  return typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Splits an answer into streaming pieces: words for Latin text, pairs of characters for Chinese. */
export function streamPieces(text: string): string[] {
  return text.match(/[\u3400-\u9fff\uf900-\ufaff]{1,2}|[^\s\u3400-\u9fff\uf900-\ufaff]+\s*|\s+/g) ?? [];
}

function boundToolOf(tool: BindToolsInput): LocalBoundTool {
  const candidate = tool as { name?: unknown; metadata?: Record<string, unknown>; function?: { name?: string } };
  const name = typeof candidate.name === 'string' ? candidate.name : (candidate.function?.name ?? '');
  const routing = candidate.metadata?.[LOCAL_ROUTING_KEY];
  return { name, routing: isLocalToolRouting(routing) ? routing : undefined };
}

/**
 * The offline, deterministic chat model (LLM_PROVIDER=local). It does not
 * understand language: it answers greetings and thanks itself, and routes
 * everything else by the routing hints of the tools it is bound to (each
 * tool says when it applies and how to answer from its output). Same input,
 * same output.
 */
export class LocalChatModel extends BaseChatModel<BaseChatModelCallOptions, AIMessageChunk> {
  readonly role: LocalModelRole;
  /** In binding order. */
  readonly tools: LocalBoundTool[];
  /** Highest routing priority first; ties keep the binding order. */
  private readonly routingOrder: LocalBoundTool[];
  private readonly maxTokens?: number;
  private readonly stop?: string[];

  constructor(fields: LocalChatModelFields = {}) {
    super(fields);
    this.role = fields.role ?? 'main';
    this.tools = fields.tools ?? [];
    this.maxTokens = fields.maxTokens;
    this.stop = fields.stop;
    this.routingOrder = [...this.tools].sort((a, b) => (b.routing?.priority ?? -Infinity) - (a.routing?.priority ?? -Infinity));
  }

  get toolNames(): string[] {
    return this.tools.map((tool) => tool.name);
  }

  static lc_name(): string {
    return 'LocalChatModel';
  }

  _llmType(): string {
    return 'local-extractive';
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<BaseChatModelCallOptions>): Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions> {
    const bound = new LocalChatModel({
      role: this.role,
      tools: tools.map(boundToolOf).filter((tool) => tool.name),
      maxTokens: this.maxTokens,
      stop: this.stop,
    });
    return kwargs ? bound.withConfig(kwargs) : bound;
  }

  async _generate(messages: BaseMessage[], options?: this['ParsedCallOptions']): Promise<ChatResult> {
    const reply = await this.limited(this.reply(messages), options?.stop);
    const message =
      reply.kind === 'text'
        ? new AIMessage({ content: reply.text, response_metadata: { finish_reason: reply.finish } })
        : new AIMessage({
            content: '',
            tool_calls: [{ id: `call_${randomUUID()}`, name: reply.name, args: reply.args, type: 'tool_call' }],
            response_metadata: { finish_reason: 'tool_calls' },
          });
    return { generations: [{ text: reply.kind === 'text' ? reply.text : '', message }] };
  }

  /** The reply within the request's stop sequences and token limit. */
  private async limited(reply: Reply, callStop?: string[]): Promise<Reply & { finish?: FinishReason }> {
    if (reply.kind !== 'text') return reply;
    let text = reply.text;
    let finish: FinishReason = 'stop';
    for (const stop of [...(this.stop ?? []), ...(callStop ?? [])]) {
      const at = stop === '' ? -1 : text.indexOf(stop);
      if (at >= 0) text = text.slice(0, at);
    }
    if (this.maxTokens !== undefined) {
      const cut = await truncateToTokens(text, this.maxTokens);
      text = cut.text;
      if (cut.truncated) finish = 'length';
    }
    return { kind: 'text', text, finish };
  }

  async *_streamResponseChunks(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    const reply = await this.limited(this.reply(messages), options.stop);
    if (reply.kind === 'tool') {
      const chunk = new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          tool_call_chunks: [{ id: `call_${randomUUID()}`, name: reply.name, args: JSON.stringify(reply.args), index: 0, type: 'tool_call_chunk' }],
          response_metadata: { finish_reason: 'tool_calls' },
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
    yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', response_metadata: { finish_reason: reply.finish } }) });
  }

  private reply(messages: BaseMessage[]): Reply {
    const lastHumanIndex = messages.map((m) => m.getType()).lastIndexOf('human');
    const question = lastHumanIndex >= 0 ? textOf(messages[lastHumanIndex]) : '';
    if (this.role === 'fast') return { kind: 'text', text: summarizeExtractively(question) };

    const toolResults = messages.slice(lastHumanIndex + 1).filter((m): m is ToolMessage => m.getType() === 'tool');
    if (toolResults.length > 0) return { kind: 'text', text: this.composeFromTools(question, toolResults) };

    const zh = containsCjk(question);
    // A tool's intent is written in simplified characters: a question in traditional ones (天氣) is also read in the
    // standard form, and a tool that claims the question as asked is called with it as asked.
    const read = standardForm(question);
    const smallTalk = detectSmallTalk(read);
    if (smallTalk === 'greeting') {
      const capabilities = this.tools.flatMap((tool) => (tool.routing ? [tool.routing.capability[zh ? 'zh' : 'en']] : []));
      if (capabilities.length === 0) return { kind: 'text', text: zh ? '你好！有什么可以帮你？' : 'Hello! How can I help?' };
      return {
        kind: 'text',
        text: zh ? `你好！我可以${capabilities.join('，也可以')}。` : `Hello! I can ${joinEnglish(capabilities)} for you.`,
      };
    }
    if (smallTalk === 'thanks') return { kind: 'text', text: zh ? '不客气！还有什么可以帮你？' : "You're welcome! Anything else?" };
    for (const tool of this.routingOrder) {
      const route = tool.routing?.route(question) ?? (read === question ? null : tool.routing?.route(read));
      if (!route) continue;
      if ('ask' in route) return { kind: 'text', text: route.ask };
      return { kind: 'tool', name: tool.name, args: route.call };
    }
    return {
      kind: 'text',
      text: zh ? '我是离线的本地模型，只能借助工具回答，这条消息没有合适的工具可用。' : 'I am the offline local model: I answer with my tools, and none of them fits this message.',
    };
  }

  /** The answer from the tools' outputs, in the language of the question. */
  private composeFromTools(question: string, results: ToolMessage[]): string {
    const zh = containsCjk(question);
    return results
      .map((result) => {
        const content = textOf(result);
        // The tool's own error text is for a model that can read it, not for the user.
        if (result.status === 'error') return zh ? `工具 ${result.name} 调用失败。` : `The ${result.name} tool failed.`;
        const routing = this.tools.find((tool) => tool.name === result.name)?.routing;
        if (!routing) return zh ? `工具 ${result.name} 的结果：${clip(content, 1000)}` : `${result.name}: ${clip(content, 1000)}`;
        return inLanguage(routing.compose(question, content), result.name ?? '', zh);
      })
      .join('\n\n');
  }
}

/**
 * A tool's answer in the question's language: the text for that language
 * when the tool gives one per language; a single text that has no Chinese
 * in it, for a Chinese question, framed by a Chinese sentence naming the
 * tool (the model cannot translate it).
 */
function inLanguage(answer: LocalAnswer, toolName: string, zh: boolean): string {
  if (typeof answer !== 'string') return zh ? answer.zh : answer.en;
  return zh && !containsCjk(answer) ? `工具 ${toolName} 的结果：${answer}` : answer;
}

function joinEnglish(phrases: string[]): string {
  return phrases.length <= 1 ? phrases.join('') : `${phrases.slice(0, -1).join(', ')} or ${phrases.at(-1)}`;
}
