import type { RunEvent } from '../../chat/run-event.js';
import { answerMessageId, humanMessage, interruptOf, LcMessage, LgInterrupt } from './langgraph-messages.js';
import { ASSISTANT_ID, GRAPH_ID } from './langgraph-state.js';

/** What a join without `stream_mode` gets: the modes a chat client reads. */
export const JOIN_DEFAULT_MODES: ReadonlySet<string> = new Set(['values', 'messages-tuple', 'updates', 'custom']);

/** One event of the LangGraph stream. */
export interface LgEvent {
  event: string;
  data: unknown;
  id: string;
}

/** Where a reader resumes: after our event `afterEvent`, and within the next one after its first `skip` parts. */
export interface LgCursor {
  afterEvent: number;
  skip: number;
}

export const LG_LAST_EVENT_ID_RULE = 'Last-Event-ID must be -1, or an event id of this stream ("<n>_<k>" or "<n>")';

/**
 * Reads `Last-Event-ID`: absent or `-1` is the whole run; `n_k` is after the
 * k-th part of our event n; a bare `n` after our event n. Null when malformed.
 */
export function parseLgLastEventId(header: string | undefined): LgCursor | null {
  if (header === undefined || header.trim() === '' || header.trim() === '-1') return { afterEvent: 0, skip: 0 };
  const match = /^([0-9]{1,9})(?:_([0-9]{1,4}))?$/.exec(header.trim());
  if (!match) return null;
  const event = Number(match[1]);
  return match[2] === undefined ? { afterEvent: event, skip: 0 } : { afterEvent: event - 1, skip: Number(match[2]) + 1 };
}

export interface RunView {
  runId: string;
  threadId: string | null;
  userId: string;
  /** The thread's messages before the run, and the run's own question. */
  before: LcMessage[];
  question: LcMessage | null;
  /** The thread's messages once the run stored its own (read after its end). */
  finalMessages: () => Promise<LcMessage[]>;
}

const TUPLE_METADATA = (view: RunView) => ({
  langgraph_step: 1,
  langgraph_node: GRAPH_ID,
  langgraph_triggers: [`branch:to:${GRAPH_ID}`],
  langgraph_path: ['__pregel_pull', GRAPH_ID],
  langgraph_checkpoint_ns: '',
  checkpoint_ns: '',
  run_id: view.runId,
  thread_id: view.threadId,
  graph_id: GRAPH_ID,
  assistant_id: ASSISTANT_ID,
});

/**
 * A run's events (run-event.ts) as the LangGraph Server API streams them.
 * Every event of ours becomes a fixed list of parts, whatever the modes
 * asked for, so part `k` of event `n` has the id `n_k` on every stream of
 * the run and a reader resumes exactly after the last part it saw:
 *
 * - `metadata` → `metadata {run_id, thread_id, attempt}`, `values` (the thread with the question);
 * - `token` → `messages` ([AIMessageChunk, metadata], the answer's id stable);
 * - `step` → `custom {type: "rag_step", step}`, `updates {tools: {rag_step}}`;
 * - `tool` → `updates` (the agent's tool call, or the tool's message), `custom {type: "tool", tool}`;
 * - `hitl` → `updates`/`values` `{__interrupt__: [{id, value}]}`, `custom {type: "hitl", hitl}`;
 * - `trace` → `custom {type: "rag_trace", trace}`;
 * - `done` → `updates {agent: {messages: [answer]}}`, `values` (the thread as stored), `end`;
 * - `error` → `error {error: code, message}`, `end` (a cancelled run: the thread as stored, then `end`);
 *
 * and, before any `error` or `end`, the `events` parts (LangChain stream events: the run's chain start and end, the
 * model's chunks, the tools, the retrieval's steps and trace as custom events) and the `debug` parts (the checkpoints
 * at the start and the end, and a task per tool call).
 */
export class LgStreamMapper {
  private readonly openCalls: Array<{ name: string; id: string }> = [];
  private calls = 0;
  /** The id of the tool call the last `tool` event was about. */
  private lastCall = '';
  private interrupt: LgInterrupt | null = null;

  constructor(
    private readonly view: RunView,
    private readonly modes: ReadonlySet<string>,
    private readonly cursor: LgCursor = { afterEvent: 0, skip: 0 },
  ) {}

  /** The parts of one event that the modes asked for and the cursor has not passed, as SSE text. */
  async sse(event: RunEvent): Promise<string> {
    const parts = await this.parts(event);
    if (event.id <= this.cursor.afterEvent) return '';
    const skip = event.id === this.cursor.afterEvent + 1 ? this.cursor.skip : 0;
    return parts
      .map((part, k) => ({ ...part, id: `${event.id}_${k}` }))
      .filter((part, k) => k >= skip && this.wanted(part.event))
      .map(formatLgSse)
      .join('');
  }

  /** The values a finished run leaves (runs.wait, join): the thread as stored, with the interrupt if the run paused. */
  async finalValues(event: RunEvent): Promise<Record<string, unknown>> {
    if (event.event === 'error' && event.data.code !== 'cancelled') return { __error__: { error: event.data.code, message: event.data.message } };
    const messages = await this.view.finalMessages();
    return { messages, ...(this.interrupt ? { __interrupt__: [this.interrupt] } : {}) };
  }

  private wanted(name: string): boolean {
    if (name === 'metadata' || name === 'error' || name === 'end') return true;
    return this.modes.has(name === 'messages' ? 'messages-tuple' : name);
  }

  /** The event's parts: those of values, messages, updates and custom, then those of events and debug, then error and end. */
  private async parts(event: RunEvent): Promise<Array<Omit<LgEvent, 'id'>>> {
    const parts = await this.modeParts(event);
    const terminal = parts.findIndex((part) => part.event === 'error' || part.event === 'end');
    const at = terminal < 0 ? parts.length : terminal;
    return [...parts.slice(0, at), ...(await this.traceParts(event)), ...parts.slice(at)];
  }

  /**
   * The `events` (LangChain stream events) and `debug` (checkpoints and tasks) parts of an event: the run's start and
   * end, the model's chunks, the tools' start and end, and the retrieval's steps and trace as custom events.
   */
  private async traceParts(event: RunEvent): Promise<Array<Omit<LgEvent, 'id'>>> {
    const { view } = this;
    const base = { run_id: view.runId, tags: [] as string[], metadata: TUPLE_METADATA(view), parent_ids: [] as string[] };
    const checkpoint = (values: Record<string, unknown>, next: string[], source: string) => ({
      event: 'debug',
      data: {
        type: 'checkpoint',
        step: source === 'input' ? -1 : 1,
        timestamp: new Date().toISOString(),
        payload: { config: { configurable: { thread_id: view.threadId, checkpoint_ns: '' } }, values, metadata: { source, run_id: view.runId }, next, tasks: [] },
      },
    });
    switch (event.event) {
      case 'metadata': {
        const input = { messages: [...view.before, ...(view.question ? [view.question] : [])] };
        return [{ event: 'events', data: { ...base, event: 'on_chain_start', name: 'LangGraph', data: { input } } }, checkpoint(input, [GRAPH_ID], 'input')];
      }
      case 'token':
        return [
          {
            event: 'events',
            data: { ...base, event: 'on_chat_model_stream', name: 'model', run_id: `${view.runId}-model`, parent_ids: [view.runId], data: { chunk: this.chunk(event.data.text) } },
          },
        ];
      case 'step':
      case 'trace':
        return [{ event: 'events', data: { ...base, event: 'on_custom_event', name: event.event === 'step' ? 'rag_step' : 'rag_trace', data: event.data } }];
      case 'tool': {
        const call = this.lastCall;
        const started = event.data.phase === 'start';
        return [
          {
            event: 'events',
            data: {
              ...base,
              event: started ? 'on_tool_start' : event.data.summary.failed ? 'on_tool_error' : 'on_tool_end',
              name: event.data.name,
              run_id: call,
              parent_ids: [view.runId],
              data: started ? { input: event.data.summary.args ?? {} } : { output: event.data.summary.output ?? null },
            },
          },
          {
            event: 'debug',
            data: {
              type: started ? 'task' : 'task_result',
              step: 1,
              timestamp: new Date().toISOString(),
              payload: started
                ? { id: call, name: 'tools', input: event.data.summary.args ?? {}, triggers: ['branch:to:tools'] }
                : { id: call, name: 'tools', error: event.data.summary.failed ? 'the tool failed' : null, result: [['output', event.data.summary.output ?? null]], interrupts: [] },
            },
          },
        ];
      }
      case 'hitl':
        return [];
      case 'done': {
        const messages = await view.finalMessages();
        return [
          { event: 'events', data: { ...base, event: 'on_chain_end', name: 'LangGraph', data: { output: { messages } } } },
          checkpoint({ messages }, this.interrupt ? [GRAPH_ID] : [], 'loop'),
        ];
      }
      case 'error':
        return [{ event: 'events', data: { ...base, event: 'on_chain_error', name: 'LangGraph', data: { error: { error: event.data.code, message: event.data.message } } } }];
    }
  }

  private async modeParts(event: RunEvent): Promise<Array<Omit<LgEvent, 'id'>>> {
    const { view } = this;
    switch (event.event) {
      case 'metadata':
        return [
          { event: 'metadata', data: { run_id: view.runId, thread_id: view.threadId, attempt: 1, ...traceIdOf(event.data) } },
          { event: 'values', data: { messages: [...view.before, ...(view.question ? [view.question] : [])] } },
        ];
      case 'token':
        return [{ event: 'messages', data: [this.chunk(event.data.text), TUPLE_METADATA(view)] }];
      case 'step':
        return [
          { event: 'custom', data: { type: 'rag_step', step: event.data } },
          { event: 'updates', data: { tools: { rag_step: event.data } } },
        ];
      case 'tool':
        return this.toolParts(event.data);
      case 'hitl': {
        this.interrupt = interruptOf(event.data);
        return [
          { event: 'updates', data: { __interrupt__: [this.interrupt] } },
          { event: 'values', data: { __interrupt__: [this.interrupt] } },
          { event: 'custom', data: { type: 'hitl', hitl: event.data } },
        ];
      }
      case 'trace':
        return [{ event: 'custom', data: { type: 'rag_trace', trace: event.data } }];
      case 'done': {
        const messages = await view.finalMessages();
        const answer = messages.find((message) => message.id === answerMessageId(view.runId));
        return [
          { event: 'updates', data: { [GRAPH_ID]: { messages: answer ? [answer] : [] } } },
          { event: 'values', data: { messages } },
          { event: 'end', data: { run_id: view.runId, status: this.interrupt ? 'interrupted' : 'success' } },
        ];
      }
      case 'error':
        if (event.data.code === 'cancelled') {
          return [
            { event: 'values', data: { messages: await view.finalMessages() } },
            { event: 'end', data: { run_id: view.runId, status: 'interrupted' } },
          ];
        }
        return [
          { event: 'error', data: { error: event.data.code, message: event.data.message } },
          { event: 'end', data: { run_id: view.runId, status: 'error' } },
        ];
    }
  }

  private chunk(text: string): Record<string, unknown> {
    return {
      type: 'AIMessageChunk',
      id: answerMessageId(this.view.runId),
      content: text,
      additional_kwargs: {},
      response_metadata: {},
      tool_call_chunks: [],
      tool_calls: [],
      invalid_tool_calls: [],
    };
  }

  private toolParts(tool: Extract<RunEvent, { event: 'tool' }>['data']): Array<Omit<LgEvent, 'id'>> {
    if (tool.phase === 'start') {
      this.calls += 1;
      const call = { name: tool.name, id: `call-${this.view.runId}-${this.calls}` };
      this.openCalls.push(call);
      this.lastCall = call.id;
      const request: LcMessage = {
        type: 'ai',
        id: `${answerMessageId(this.view.runId)}-call-${this.calls}`,
        content: '',
        additional_kwargs: {},
        response_metadata: {},
        tool_calls: [{ name: tool.name, args: tool.summary.args ?? {}, id: call.id, type: 'tool_call' }],
        invalid_tool_calls: [],
      };
      return [
        { event: 'updates', data: { [GRAPH_ID]: { messages: [request] } } },
        { event: 'custom', data: { type: 'tool', tool } },
      ];
    }
    const at = this.openCalls.findIndex((call) => call.name === tool.name);
    const call = at >= 0 ? this.openCalls.splice(at, 1)[0] : { name: tool.name, id: `call-${this.view.runId}-${(this.calls += 1)}` };
    this.lastCall = call.id;
    const result: LcMessage = {
      ...humanMessage(`${call.id}-result`, tool.summary.output ?? ''),
      type: 'tool',
      name: tool.name,
      tool_call_id: call.id,
      status: tool.summary.failed ? 'error' : 'success',
    };
    return [
      { event: 'updates', data: { tools: { messages: [result] } } },
      { event: 'custom', data: { type: 'tool', tool } },
    ];
  }
}

export function formatLgSse(part: LgEvent): string {
  return `event: ${part.event}\ndata: ${JSON.stringify(part.data)}\nid: ${part.id}\n\n`;
}

/** The run's OpenTelemetry trace id (`trace_id` of its `metadata` event, when tracing is on), to pass on as it is. */
function traceIdOf(data: unknown): { trace_id?: string } {
  const traceId = (data as { trace_id?: unknown } | null)?.trace_id;
  return typeof traceId === 'string' ? { trace_id: traceId } : {};
}
