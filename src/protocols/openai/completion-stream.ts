import type { RunEvent } from '../../chat/run-event.js';
import { ERROR_CODE_STATUS, type ErrorCode } from '../../common/coded-error.js';
import { buildErrorBody } from '../../common/http-exception.filter.js';
import type { SseTransport } from '../../common/sse-stream.js';
import type { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';
import type { TurnUsage } from '../../agent/turn-usage.js';
import { type OpenAiErrorObject, openAiErrorObject } from './openai-errors.js';

/** What the assistant says for a paused turn: its clarification prompt, then the options to choose from. */
export function hitlContent(pending: PendingHitlState): string {
  const prompt = pending.clarification_prompt ?? pending.original_question ?? '';
  const options = pending.options ?? [];
  return options.length === 0 ? prompt : `${prompt}\n\n${options.map((option, index) => `${index + 1}. ${option}`).join('\n')}`;
}

/** OpenAI's finish reasons this agent can give. */
export type FinishReason = 'stop' | 'length' | 'content_filter';

export function finishReasonOf(reported: string | undefined): FinishReason {
  return reported === 'length' || reported === 'content_filter' ? reported : 'stop';
}

/** The `usage` object: OpenAI's three counts, and `estimated: true` when the model did not count them itself. */
export function usageObject(usage: TurnUsage): Record<string, number | boolean> {
  const { prompt_tokens, completion_tokens, total_tokens } = usage;
  return { prompt_tokens, completion_tokens, total_tokens, ...(usage.estimated ? { estimated: true } : {}) };
}

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

/** The extra top-level fields of this service's completions (clients that ignore unknown fields see a plain completion). */
export interface CompletionExtras {
  rag_trace: RagTrace | null;
  pending_hitl: PendingHitlState | null;
  session_id?: string;
}

/** The transport of a streamed completion: the service's SSE headers and heartbeat, no opening comment (the role chunk comes first). */
export function completionTransport(heartbeatMs: number): SseTransport {
  return { heartbeatComment: 'heartbeat', heartbeatMs };
}

/** An `error` event's data as the OpenAI error object the stream ends with. */
export function streamError(code: ErrorCode, message: string, saved?: boolean | null): OpenAiErrorObject {
  return openAiErrorObject(buildErrorBody(ERROR_CODE_STATUS[code], message, code, saved !== undefined ? { message_saved: saved } : undefined), null);
}

/**
 * A turn as `chat.completion.chunk` Server-Sent Events: the role first, a
 * content delta per token, the final chunk with `finish_reason` and the RAG
 * trace, the usage chunk when asked, then `data: [DONE]`. An error after
 * the stream opened is an `{error}` event, as OpenAI sends it. Each method
 * returns the text to write; the state is the chunk id and what the run
 * said so far (its trace, its pause, whether content went out).
 */
export class CompletionChunks {
  private contentSent = false;
  /** The run's `trace` and `hitl` events: the final chunk carries them. */
  trace: RagTrace | null = null;
  pending: PendingHitlState | null = null;

  constructor(
    private readonly identity: CompletionIdentity,
    private readonly includeUsage: boolean,
  ) {}

  /** The first chunk: the assistant's role. */
  role(): string {
    return this.chunk({ role: 'assistant', content: '' }, null);
  }

  /**
   * What a run's event sends. `done` sends nothing: the final chunk needs the
   * turn's usage and finish reason, which are not events (see `finish`).
   */
  map(event: RunEvent): string {
    switch (event.event) {
      case 'token':
        return this.content(event.data.text);
      case 'hitl':
        this.pending = event.data;
        return this.paused(event.data);
      case 'trace':
        this.trace = event.data;
        return '';
      case 'error':
        return this.fail(streamError(event.data.code, event.data.message, event.data.message_saved));
      default:
        return '';
    }
  }

  content(text: string): string {
    if (text === '') return '';
    this.contentSent = true;
    return this.chunk({ content: text }, null);
  }

  /** A paused turn's question, unless the model already streamed it. */
  paused(pending: PendingHitlState): string {
    return this.contentSent ? '' : this.content(hitlContent(pending));
  }

  finish(reason: FinishReason, extras: CompletionExtras, usage: TurnUsage | null): string {
    const usageChunk = this.includeUsage && usage ? data({ ...this.base(), choices: [], usage: usageObject(usage) }) : '';
    return `${this.chunk({}, reason, extras)}${usageChunk}data: [DONE]\n\n`;
  }

  fail(error: OpenAiErrorObject): string {
    return data({ error });
  }

  private chunk(delta: Record<string, unknown>, finishReason: FinishReason | null, extras?: CompletionExtras): string {
    return data({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
      ...extras,
    });
  }

  private base() {
    return { id: this.identity.id, object: 'chat.completion.chunk', created: this.identity.created, model: this.identity.model, system_fingerprint: null };
  }
}

function data(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
