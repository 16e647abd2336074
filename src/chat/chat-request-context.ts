import { Injectable, Scope } from '@nestjs/common';
import { HitlResumeState, PendingHitlState, RagTrace } from '../trace/trace.protocol.js';
import { normalizeAndValidateRagTrace, normalizeHitlResumeState } from '../trace/trace.normalizer.js';

export type ChatMode = 'sync' | 'stream';

/** The `step` event a retrieval stage emits (protocol: SSE `step`). */
export interface RagStepEvent {
  type: 'step';
  stage: string;
  label: string;
  elapsed_ms: number;
  total_ms: number;
  [detail: string]: unknown;
}

export interface ChatTurnIdentity {
  userId: string;
  sessionId: string;
  runId: string;
  mode: ChatMode;
}

/** A paused task being resumed: `rounds` is how many questions the run has put to the user so far. */
export interface HitlResume {
  pending: PendingHitlState;
  resumeState: HitlResumeState | null;
  rounds: number;
}

/** Knowledge retrievals allowed per turn. */
export const KNOWLEDGE_TOOL_BUDGET = 1;

/**
 * The state one chat turn shares between the service, the agent's tools and
 * the RAG pipeline (seed C15, F05–F13). Request-scoped: Nest makes one per
 * chat request; the controller begins it once the user is known and hands it
 * to the singleton services explicitly. Node runs each synchronous block
 * alone, so the seed's locks become plain invariants: one knowledge retrieval
 * per turn, a trace taken once, no events after close().
 */
@Injectable({ scope: Scope.REQUEST })
export class ChatRequestContext {
  private identity?: ChatTurnIdentity;
  private active = false;
  private knowledgeCalls = 0;
  private ragTrace: RagTrace | null = null;
  private hitlSnapshot: HitlResumeState | null = null;
  private startedAt = 0;
  private lastStepAt = 0;
  private hitlResume: HitlResume | null = null;
  /** Where steps go: LangGraph's `custom` stream writer of the running tool, or one given at begin(). */
  private writer?: (chunk: unknown) => void;

  /** F05 / F06: binds the turn; `stream` turns emit steps, `sync` turns do not. */
  begin(identity: ChatTurnIdentity, writer?: (chunk: unknown) => void): this {
    this.identity = identity;
    this.active = true;
    this.knowledgeCalls = 0;
    this.ragTrace = null;
    this.hitlSnapshot = null;
    this.startedAt = performance.now();
    this.lastStepAt = this.startedAt;
    this.writer = writer;
    this.hitlResume = null;
    return this;
  }

  /** Marks this turn as the user's supplement for a paused run (human in the loop). */
  resumeHitl(pending: PendingHitlState, resumeState: HitlResumeState | null, rounds: number): void {
    this.hitlResume = { pending, resumeState, rounds };
  }

  /** The paused task this turn resumes, if any. */
  get resumingHitl(): HitlResume | null {
    return this.hitlResume;
  }

  static forSync(identity: Omit<ChatTurnIdentity, 'mode'>): ChatRequestContext {
    return new ChatRequestContext().begin({ ...identity, mode: 'sync' });
  }

  static forStream(identity: Omit<ChatTurnIdentity, 'mode'>, writer?: (chunk: unknown) => void): ChatRequestContext {
    return new ChatRequestContext().begin({ ...identity, mode: 'stream' }, writer);
  }

  get userId(): string {
    return this.required().userId;
  }
  get sessionId(): string {
    return this.required().sessionId;
  }
  get runId(): string {
    return this.required().runId;
  }
  get mode(): ChatMode {
    return this.required().mode;
  }
  get isActive(): boolean {
    return this.active;
  }

  /**
   * Routes steps to LangGraph's `custom` stream mode. A tool calls this with
   * the writer LangGraph hands it in its run config.
   */
  useStreamWriter(writer: unknown): void {
    if (typeof writer === 'function') this.writer = writer as (chunk: unknown) => void;
  }

  /**
   * F07: reports a retrieval step with the time since the previous step and
   * since the turn began. Goes out through LangGraph's `custom` stream mode.
   * A no-op for sync turns and after close().
   */
  emitRagStep(stage: string, label: string, details: Record<string, unknown> = {}): void {
    if (!this.active || this.identity?.mode !== 'stream') return;
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
    this.writer?.(event);
  }

  /** F08: keeps this turn's trace (normalized and validated) and the optional HITL resume snapshot. */
  storeRagTrace(trace: unknown, resumeState?: unknown): void {
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

  /** F11 */
  resetKnowledgeToolBudget(): void {
    this.knowledgeCalls = 0;
  }

  /** F12: true for the turn's first knowledge retrieval, false once the budget is spent. */
  acquireKnowledgeToolSlot(): boolean {
    if (!this.active || this.knowledgeCalls >= KNOWLEDGE_TOOL_BUDGET) return false;
    this.knowledgeCalls += 1;
    return true;
  }

  /** F13: ends the turn; steps are no longer emitted. */
  close(): void {
    this.active = false;
    this.writer = undefined;
  }

  private required(): ChatTurnIdentity {
    if (!this.identity) throw new Error('ChatRequestContext used before begin()');
    return this.identity;
  }
}

