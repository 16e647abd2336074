import type { Response } from 'express';
import type { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';
import type { TurnUsage } from '../../agent/turn-usage.js';
import type { OpenAiErrorObject } from './openai-errors.js';

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

/**
 * Writes a turn as `chat.completion.chunk` Server-Sent Events: the role
 * first, a content delta per token, the final chunk with `finish_reason`
 * and the RAG trace, the usage chunk when asked, then `data: [DONE]`. An
 * error after the stream opened is an `{error}` event, as OpenAI sends it.
 */
export class CompletionStreamWriter {
  private contentSent = false;

  constructor(
    private readonly res: Response,
    private readonly identity: CompletionIdentity,
    private readonly includeUsage: boolean,
  ) {}

  get ended(): boolean {
    return this.res.writableEnded;
  }

  open(): void {
    const res = this.res;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'close');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    this.chunk({ role: 'assistant', content: '' }, null);
  }

  content(text: string): void {
    if (text === '') return;
    this.contentSent = true;
    this.chunk({ content: text }, null);
  }

  /** A paused turn's question, unless the model already streamed it. */
  paused(pending: PendingHitlState): void {
    if (!this.contentSent) this.content(hitlContent(pending));
  }

  finish(reason: FinishReason, extras: CompletionExtras, usage: TurnUsage | null): void {
    this.chunk({}, reason, extras);
    if (this.includeUsage && usage) this.write({ ...this.base(), choices: [], usage: usageObject(usage) });
    this.done();
  }

  fail(error: OpenAiErrorObject): void {
    this.write({ error });
    this.end();
  }

  private chunk(delta: Record<string, unknown>, finishReason: FinishReason | null, extras?: CompletionExtras): void {
    this.write({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
      ...extras,
    });
  }

  private base() {
    return { id: this.identity.id, object: 'chat.completion.chunk', created: this.identity.created, model: this.identity.model, system_fingerprint: null };
  }

  private write(payload: unknown): void {
    if (!this.res.writableEnded) this.res.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  private done(): void {
    if (!this.res.writableEnded) this.res.write('data: [DONE]\n\n');
    this.end();
  }

  private end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}
