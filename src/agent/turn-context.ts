import type { BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { ModelSampling } from '../models/sampling.js';
import type { StepReporter } from '../knowledge/public-api.js';
import { normalizeAndValidateRagTrace, normalizeHitlResumeState } from '../trace/trace.normalizer.js';
import type { HitlResumeState, PendingHitlState, RagTrace } from '../trace/trace.protocol.js';

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

/** A paused task being resumed: `rounds` is how many questions the run has put to the user so far. */
export interface HitlResume {
  pending: PendingHitlState;
  resumeState: HitlResumeState | null;
  rounds: number;
}

/** Where the turn context travels in LangGraph's RunnableConfig. */
export const TURN_CONTEXT_KEY = 'turn_context';

/**
 * The state one chat turn shares between the chat service, the agent's graph,
 * its tools and the retrieval stages (seed C15, F05–F13). It belongs to the
 * run, not to the HTTP request: it travels in LangGraph's
 * `configurable[TURN_CONTEXT_KEY]`, so the compiled graph and the tools are
 * built once and every node reads its turn with `turnContextOf(config)`.
 * Node runs each synchronous block alone, so the seed's locks are plain
 * invariants: a tool's budget per turn, a trace taken once, no events after
 * close().
 */
export class TurnContext {
  private active = true;
  private readonly toolCalls = new Map<string, number>();
  private ragTrace: RagTrace | null = null;
  private hitlSnapshot: HitlResumeState | null = null;
  private readonly startedAt = performance.now();
  private lastStepAt = this.startedAt;
  private hitlResume: HitlResume | null = null;
  /** The summary of the conversation before the recent window, for the system prompt. */
  summary?: string;
  /** The client's sampling for this turn's answers (OpenAI-compatible route); absent keeps the model's defaults. */
  sampling?: ModelSampling;
  /** Each call of the agent's model in this turn: what it was sent and what it answered (for `usage`). */
  readonly modelCalls: Array<{ prompt: BaseMessage[]; response: BaseMessage }> = [];

  constructor(readonly identity: TurnIdentity) {}

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
  get isActive(): boolean {
    return this.active;
  }

  /** The config a graph run of this turn is invoked with (merged into any other configurable keys). */
  configurable(threadId: string): Record<string, unknown> {
    return { thread_id: threadId, [TURN_CONTEXT_KEY]: this };
  }

  /** Marks this turn as the user's supplement for a paused run (human in the loop). */
  resumeHitl(pending: PendingHitlState, resumeState: HitlResumeState | null, rounds: number): void {
    this.hitlResume = { pending, resumeState, rounds };
  }

  /** The paused task this turn resumes, if any. */
  get resumingHitl(): HitlResume | null {
    return this.hitlResume;
  }

  /**
   * F07: a reporter of retrieval steps through the running node's LangGraph
   * `custom` stream writer, each with the time since the previous step and
   * since the turn began. Silent for sync turns and after close().
   */
  stepReporter(writer: unknown): StepReporter {
    return (stage, label, details = {}) => {
      if (!this.active || this.mode !== 'stream' || typeof writer !== 'function') return;
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

  /** F08: keeps this turn's trace (normalized and validated) and the optional HITL resume snapshot. */
  storeRagTrace(trace: RagTrace, resumeState?: HitlResumeState): void {
    this.ragTrace = normalizeAndValidateRagTrace(trace);
    this.hitlSnapshot = resumeState === undefined ? null : normalizeHitlResumeState(resumeState);
  }

  /** F09: the trace, once; later calls answer null. */
  takeRagTrace(): { trace: RagTrace | null; resumeState: HitlResumeState | null } {
    const taken = { trace: this.ragTrace, resumeState: this.hitlSnapshot };
    this.ragTrace = null;
    this.hitlSnapshot = null;
    return taken;
  }

  /** F10: the trace without taking it. */
  peekRagTrace(): RagTrace | null {
    return this.ragTrace;
  }

  /** F12: true while the tool has calls left in this turn's budget (counting this one); false once it is spent or the turn closed. */
  acquireToolCall(toolName: string, budget: number): boolean {
    const used = this.toolCalls.get(toolName) ?? 0;
    if (!this.active || used >= budget) return false;
    this.toolCalls.set(toolName, used + 1);
    return true;
  }

  /** F11 */
  resetToolBudgets(): void {
    this.toolCalls.clear();
  }

  /** F13: ends the turn; steps are no longer emitted and tools get no more calls. */
  close(): void {
    this.active = false;
  }
}

export class MissingTurnContextError extends Error {
  constructor() {
    super(`no TurnContext in the run config (configurable.${TURN_CONTEXT_KEY}): run the graph through ChatService`);
  }
}

/** The turn a graph node or tool runs for. */
export function turnContextOf(config: RunnableConfig | undefined): TurnContext {
  const turn = config?.configurable?.[TURN_CONTEXT_KEY];
  if (!(turn instanceof TurnContext)) throw new MissingTurnContextError();
  return turn;
}
