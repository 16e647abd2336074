import type { BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { ModelSampling } from '../models/sampling.js';
import type { RetrievalScope, StepReporter } from '../knowledge/public-api.js';

export type TurnMode = 'sync' | 'stream';

/** The `step` event a retrieval stage emits (protocol: SSE `step`). */
export interface RagStepEvent {
  type: 'step';
  stage: string;
  label: string;
  elapsed_ms: number;
  total_ms: number;
  [detail: string]: unknown;
}

export interface TurnIdentity {
  userId: string;
  sessionId: string;
  runId: string;
  mode: TurnMode;
}

/** What a turn's run is given besides its identity. */
export interface TurnOptions {
  /**
   * The knowledge collections this turn may search (its sub-questions, rewrite and clarification rounds too):
   * computed per request from the caller's access (CollectionAccess.retrievalScope), never cached.
   */
  scope: RetrievalScope;
  /** The client's sampling for this turn's answers (OpenAI-compatible route); absent keeps the model's defaults. */
  sampling?: ModelSampling;
}

/** One call of the agent's model: what it was sent and what it answered. */
export interface ModelCallRecord {
  prompt: BaseMessage[];
  response: BaseMessage;
}

/**
 * The per-run context of one chat turn: LangGraph's `context` of the graph
 * run (`graph.stream(input, { context })`, the graph's `contextSchema`),
 * read by the nodes and tools as `runtime.context`. It is made per request
 * by the controller that starts the turn and handed to the run, which may
 * outlive the request (a streamed run goes on after its client leaves).
 * Nothing of it is checkpointed: what a later turn needs (the trace, a
 * paused question) is graph state (see AgentState).
 *
 * Its mutable parts belong to this turn only: the tools' call budgets, the
 * model calls (for `usage`) and whether the turn is still open. Node runs
 * each synchronous block alone, so a budget is a plain count.
 */
export class TurnContext {
  private open = true;
  private readonly toolCalls = new Map<string, number>();
  private readonly startedAt = performance.now();
  private lastStepAt = this.startedAt;
  /** The summary of the conversation before the recent window, for the system prompt (ChatService sets it before the run). */
  summary?: string;
  readonly sampling?: ModelSampling;
  readonly scope: RetrievalScope;
  /** Each call of the agent's model in this turn (for `usage`). */
  readonly modelCalls: ModelCallRecord[] = [];

  constructor(
    readonly identity: TurnIdentity,
    options: TurnOptions,
  ) {
    this.sampling = options.sampling;
    this.scope = options.scope;
  }

  /** The context of a turn a request starts (made per request, handed to the run). */
  static of(turn: { userId: string; sessionId: string; runId: string }, mode: TurnMode, options: TurnOptions): TurnContext {
    return new TurnContext({ userId: turn.userId, sessionId: turn.sessionId, runId: turn.runId, mode }, options);
  }

  get userId(): string {
    return this.identity.userId;
  }
  get sessionId(): string {
    return this.identity.sessionId;
  }
  get runId(): string {
    return this.identity.runId;
  }
  get mode(): TurnMode {
    return this.identity.mode;
  }

  /**
   * A reporter of retrieval steps through the running node's LangGraph
   * `custom` stream writer, each with the time since the previous step and
   * since the turn began. Silent for sync turns and after close().
   */
  stepReporter(writer: unknown): StepReporter {
    return (stage, label, details = {}) => {
      if (!this.open || this.mode !== 'stream' || typeof writer !== 'function') return;
      const now = performance.now();
      const event: RagStepEvent = {
        ...details,
        type: 'step',
        stage,
        label,
        elapsed_ms: Math.round(now - this.lastStepAt),
        total_ms: Math.round(now - this.startedAt),
      };
      this.lastStepAt = now;
      (writer as (chunk: unknown) => void)(event);
    };
  }

  /** True while the tool has calls left in this turn's budget (counting this one); false once it is spent or the turn closed. */
  acquireToolCall(toolName: string, budget: number): boolean {
    const used = this.toolCalls.get(toolName) ?? 0;
    if (!this.open || used >= budget) return false;
    this.toolCalls.set(toolName, used + 1);
    return true;
  }

  /** Ends the turn; steps are no longer emitted and tools get no more calls. */
  close(): void {
    this.open = false;
  }
}

/**
 * The agent graph's `contextSchema`: a run's context is `{ turn }`, its
 * TurnContext. LangGraph checks it when the run starts, so a run without
 * its turn fails before any node runs.
 */
export const AgentRunContextSchema = z.object({ turn: z.instanceof(TurnContext) });

/** What nodes and tools read as `runtime.context`. */
export type AgentRunContext = z.infer<typeof AgentRunContextSchema>;
