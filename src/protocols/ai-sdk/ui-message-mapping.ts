import type { UIMessage, UIMessageChunk } from 'ai';
import type { RunEvent } from '../../chat/run-event.js';
import type { StepEvent, ToolEvent } from '../../chat/sse-events.dto.js';
import type { SseTransport } from '../../common/sse-stream.js';
import type { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';

/**
 * The transport of the AI SDK's UI message stream, as the SDK's own
 * pipeUIMessageStreamToResponse sends it (with this service's cache and
 * connection headers): `: stream-open` first, `: keep-alive` after each
 * quiet spell.
 */
export function uiMessageStreamTransport(keepAliveMs: number): SseTransport {
  return {
    headers: [
      ['cache-control', 'no-cache, no-transform'],
      ['connection', 'close'],
      ['content-type', 'text/event-stream'],
      ['x-accel-buffering', 'no'],
      ['x-vercel-ai-ui-message-stream', 'v1'],
    ],
    openComment: 'stream-open',
    heartbeatComment: 'keep-alive',
    heartbeatMs: keepAliveMs,
    heartbeatWhenIdle: true,
  };
}

/** The stream's last line, after the run's terminal event. */
export const UI_MESSAGE_STREAM_DONE = 'data: [DONE]\n\n';

/** The metadata of the assistant message: the run and the session it belongs to. */
export interface RagMessageMetadata {
  run_id: string;
  session_id: string;
  /** The turn's OpenTelemetry trace id, when tracing is on. */
  trace_id?: string;
  /** Set when the turn failed: whether the user's message was kept (null: not known yet), from the `error` event. */
  message_saved?: boolean | null;
}

/** The data parts of the assistant message, by name (`data-step`, `data-tool`, `data-trace`, `data-hitl`). */
export type RagDataParts = {
  step: StepEvent;
  tool: ToolEvent;
  trace: RagTrace;
  hitl: PendingHitlState;
};

/** The assistant message the stream builds, for `useChat<RagUIMessage>()`. */
export type RagUIMessage = UIMessage<RagMessageMetadata, RagDataParts>;
export type RagUIMessageChunk = UIMessageChunk<RagMessageMetadata, RagDataParts>;

/**
 * Turns the events of one run into UI message stream chunks, in order.
 * Stateful (one per stream): it opens and closes text parts and pairs each
 * tool's end with its start so both land in one `data-tool` part.
 */
export class UiMessageMapper {
  private openText: string | null = null;
  private textParts = 0;
  private toolCalls = 0;
  private readonly openTools = new Map<string, string[]>();
  private metadata: RagMessageMetadata | null = null;

  /** The event's chunks as the stream's `data:` lines. */
  frames(event: RunEvent): string {
    return this.map(event)
      .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
      .join('');
  }

  map(event: RunEvent): RagUIMessageChunk[] {
    switch (event.event) {
      case 'metadata': {
        this.metadata = event.data;
        return [{ type: 'start', messageId: this.metadata.run_id, messageMetadata: this.metadata }];
      }
      case 'step':
        return [{ type: 'data-step', data: event.data }];
      case 'token': {
        const delta = event.data.text;
        const chunks = this.startText();
        return [...chunks, { type: 'text-delta', id: this.openText!, delta }];
      }
      case 'tool': {
        const tool = event.data;
        return [...this.endText(), { type: 'data-tool', id: this.toolPartId(tool), data: tool }];
      }
      case 'hitl': {
        const pending = event.data;
        // A plain useChat shows text parts only: the question put to the user is also the answer's text.
        const prompt = pending.clarification_prompt ?? pending.original_question ?? '';
        return [...this.endText(), { type: 'data-hitl', id: 'hitl', data: pending }, ...this.wholeText(prompt)];
      }
      case 'trace':
        return [...this.endText(), { type: 'data-trace', id: 'trace', data: event.data }];
      case 'done': {
        const { response } = event.data;
        // An answer that came without tokens (the model did not stream) arrives whole.
        const text = this.textParts === 0 ? this.wholeText(response) : this.endText();
        return [...text, { type: 'finish', finishReason: 'stop', ...(this.metadata ? { messageMetadata: this.metadata } : {}) }];
      }
      case 'error': {
        const error = event.data;
        const saved = error.message_saved !== undefined && this.metadata ? { messageMetadata: { ...this.metadata, message_saved: error.message_saved } } : {};
        return [...this.endText(), { type: 'error', errorText: `${error.code}: ${error.message}` }, { type: 'finish', finishReason: 'error', ...saved }];
      }
      default:
        return [];
    }
  }

  private startText(): RagUIMessageChunk[] {
    if (this.openText) return [];
    this.textParts += 1;
    this.openText = `text-${this.textParts}`;
    return [{ type: 'text-start', id: this.openText }];
  }

  private endText(): RagUIMessageChunk[] {
    if (!this.openText) return [];
    const id = this.openText;
    this.openText = null;
    return [{ type: 'text-end', id }];
  }

  private wholeText(text: string): RagUIMessageChunk[] {
    if (!text) return this.endText();
    const chunks = [...this.endText(), ...this.startText()];
    const id = this.openText!;
    return [...chunks, { type: 'text-delta', id, delta: text }, ...this.endText()];
  }

  /** A start opens a part of its own; its end (the next end of a tool of that name) updates it. */
  private toolPartId(tool: ToolEvent): string {
    const open = this.openTools.get(tool.name) ?? [];
    if (tool.phase === 'end' && open.length > 0) return open.shift()!;
    this.toolCalls += 1;
    const id = `tool-${this.toolCalls}`;
    if (tool.phase === 'start') this.openTools.set(tool.name, [...open, id]);
    return id;
  }
}
