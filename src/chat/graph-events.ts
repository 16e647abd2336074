import { AIMessage, AIMessageChunk, BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { AgentStateValues } from '../agent/agent-state.js';
import type { RagTrace } from '../trace/trace.protocol.js';
import type { RunEventArgs } from './run-event.js';
import { type StepEvent, toolEndSummary, toolFailedSummary, toolStartSummary } from './sse-events.dto.js';

/** Where a turn's events go: the run's stream in Redis, or a caller's own sink (a stateless turn). */
export type Emit = (...event: RunEventArgs) => void;

/** One chunk of `graph.stream` with several stream modes: the mode and its payload. */
export type GraphStreamChunk = [mode: string, chunk: unknown];

/** A node update of the agent graph (stream mode `updates`), by node name. */
type GraphUpdate = Record<string, { messages?: BaseMessage[]; ragTrace?: RagTrace | null } | undefined> & {
  __interrupt__?: Array<{ value?: Record<string, unknown> }>;
};

/** A pause: in stream mode `values` the interrupt comes as a chunk of its own (`__interrupt__`), not as a state. */
function isInterruptChunk(chunk: unknown): boolean {
  return typeof chunk === 'object' && chunk !== null && '__interrupt__' in chunk;
}

export function textContent(message: BaseMessage): string {
  const content = message.content;
  return typeof content === 'string' ? content : content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/**
 * Turns the chunks of one graph run (stream modes `messages`, `custom`,
 * `updates`) into the run's events (`token`, `step`, `tool`) and keeps what
 * the turn needs when the run stops: the answer so far, the last trace the
 * tools wrote, the final answer and the question the run paused on.
 */
export class GraphEventTranslator {
  private streamedTokens = '';
  private finalAnswer: string | undefined;
  private lastTrace: RagTrace | null = null;
  private pausedOn: Record<string, unknown> | undefined;
  private lastValues: AgentStateValues | undefined;
  private readonly tools = new Set<string>();

  constructor(private readonly emit: Emit) {}

  /** What the model said so far (its streamed tokens): kept with a cancelled turn. */
  get answerSoFar(): string {
    return this.streamedTokens;
  }

  /** The answer of a run that ended: the agent's last message without tool calls, else what it streamed. */
  get answer(): string {
    return this.finalAnswer ?? this.streamedTokens;
  }

  /** The trace the tools last wrote to the state (what a cancelled turn keeps: the final state is not read then). */
  get trace(): RagTrace | null {
    return this.lastTrace;
  }

  /** The interrupt's value when the run paused for the user. */
  get interrupt(): Record<string, unknown> | undefined {
    return this.pausedOn;
  }

  /**
   * The graph's state after its last completed step (stream mode `values`), which is what its last checkpoint
   * holds, read without reading the checkpoint back; undefined when no step completed in this run.
   */
  get finalValues(): AgentStateValues | undefined {
    return this.lastValues;
  }

  /** The tools this run called or ran (a resumed search runs again without a new call), in the order first seen. */
  get toolsUsed(): string[] {
    return [...this.tools];
  }

  handle([mode, chunk]: GraphStreamChunk): void {
    if (mode === 'messages') this.onMessage(chunk as [BaseMessage, { langgraph_node?: string } | undefined]);
    else if (mode === 'custom') this.onCustom(chunk as { type?: string } & StepEvent);
    else if (mode === 'updates') this.onUpdate(chunk as GraphUpdate);
    else if (mode === 'values' && !isInterruptChunk(chunk)) this.lastValues = chunk as AgentStateValues;
  }

  private onMessage([messageChunk, metadata]: [BaseMessage, { langgraph_node?: string } | undefined]): void {
    if (metadata?.langgraph_node !== 'agent' || !(messageChunk instanceof AIMessageChunk)) return;
    const text = textContent(messageChunk);
    if (!text) return;
    this.streamedTokens += text;
    this.emit('token', { text });
  }

  /** What TurnContext.stepReporter writes. */
  private onCustom({ type, ...step }: { type?: string } & StepEvent): void {
    if (type === 'step') this.emit('step', step);
  }

  private onUpdate(update: GraphUpdate): void {
    if (update.__interrupt__?.length) this.pausedOn = update.__interrupt__[0].value ?? {};
    if (update.tools?.ragTrace !== undefined) this.lastTrace = update.tools.ragTrace;
    for (const message of update.agent?.messages ?? []) {
      if (!(message instanceof AIMessage)) continue;
      if (message.tool_calls?.length) {
        for (const call of message.tool_calls) {
          this.tools.add(call.name);
          this.emit('tool', { name: call.name, phase: 'start', summary: toolStartSummary(call.args) });
        }
      } else {
        this.finalAnswer = textContent(message);
      }
    }
    for (const message of update.tools?.messages ?? []) {
      if (!(message instanceof ToolMessage)) continue;
      // A failed call's text is for the model (and may be internal); the client is told that it failed.
      const summary = message.status === 'error' ? toolFailedSummary(toolErrorCode(message)) : toolEndSummary(textContent(message));
      if (message.name) this.tools.add(message.name);
      this.emit('tool', { name: message.name ?? '', phase: 'end', summary });
    }
  }
}

/** The code a tool gave its failure (AgentToolsNode puts it on the message), if any. */
function toolErrorCode(message: ToolMessage): string | undefined {
  const code = message.additional_kwargs?.error_code;
  return typeof code === 'string' ? code : undefined;
}
