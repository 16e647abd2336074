import type { NewMessage } from '../session/message.repository.js';
import type { AppendTurnOptions } from '../session/session-writes.service.js';
import { normalizePendingHitl } from '../trace/trace.normalizer.js';
import type { HitlResumeState, PendingHitlState, RagTrace } from '../trace/trace.protocol.js';
import type { Emit } from './graph-events.js';

export interface TurnResult {
  response: string;
  rag_trace: RagTrace | null;
  session_id: string;
  pending_hitl: PendingHitlState | null;
  run_id: string;
}

export interface PreparedTurn {
  runId: string;
  sessionId: string;
  userId: string;
  message: string;
}

/** Session metadata keys of a paused (human-in-the-loop) task: what the session API shows; the run itself resumes from its graph state. */
export const PENDING_HITL_KEY = 'pending_hitl';
export const HITL_RESUME_KEY = 'hitl_resume_state';
export const HITL_ROUNDS_KEY = 'hitl_rounds';

/** How a graph run ended: its answer or the question it paused on, and the final state's trace and resume data. */
export interface GraphOutcome {
  answer: string;
  interrupt?: Record<string, unknown>;
  trace: RagTrace | null;
  resumeState: HitlResumeState | null;
  /** The tools the run called or ran, in the order first seen (stored with the answer). */
  tools?: string[];
}

/** A turn's own commit: what it stores and answers, and how its followers are told once it landed. */
export interface CommitAttempt {
  result: TurnResult;
  messages: NewMessage[];
  end: { status: 'done' | 'interrupted' };
  options: Omit<AppendTurnOptions, 'createIfMissing'>;
  tell: () => void;
  /** The thread whose checkpoints go once it landed (none for a paused task: its question waits for an answer). */
  finishedThread: string | null;
}

/** The question a paused run puts to the user, as the `hitl` event and the session's metadata carry it. */
export function pendingHitlOf(interrupt: Record<string, unknown>, taskId: string, supplement: string | null): PendingHitlState | null {
  return normalizePendingHitl({ ...interrupt, task_id: taskId, user_supplement: supplement, created_at: new Date().toISOString() });
}

/** What a pause answers: its clarification prompt, else the question it paused on. */
export function promptOf(pending: PendingHitlState | null): string {
  return pending?.clarification_prompt ?? pending?.original_question ?? '';
}

/** What a session's turn needs of how it started: the paused task it answers (null: a new turn) and that task's round. */
export interface TurnStart {
  turn: PreparedTurn;
  threadId: string;
  resumed: boolean;
  rounds: number;
  /** Whether the session's metadata recorded a paused task (cleared once the turn answers). */
  hadPending: boolean;
}

/** The commit of a turn that paused for the user: the question is its answer, the task is recorded in the session. */
export function pausedAttempt(start: TurnStart, outcome: GraphOutcome & { interrupt: Record<string, unknown> }, emit: Emit): CommitAttempt {
  const { runId, sessionId, message } = start.turn;
  const pending = pendingHitlOf(outcome.interrupt, start.threadId, start.resumed ? message : null);
  if (!pending) throw new Error('the knowledge tool paused with an invalid HITL payload');
  const prompt = promptOf(pending);
  const { trace } = outcome;
  return {
    result: { response: prompt, rag_trace: trace, session_id: sessionId, pending_hitl: pending, run_id: runId },
    messages: [
      { type: 'human', content: message, run_id: runId },
      { type: 'ai', content: prompt, rag_trace: trace, run_id: runId, tools: outcome.tools },
    ],
    end: { status: 'interrupted' },
    options: { metadata: { [PENDING_HITL_KEY]: pending, [HITL_RESUME_KEY]: outcome.resumeState, [HITL_ROUNDS_KEY]: start.resumed ? start.rounds + 1 : 1 } },
    tell: () => {
      emit('hitl', pending);
      if (trace) emit('trace', trace);
      emit('done', { response: prompt, session_id: sessionId });
    },
    finishedThread: null,
  };
}

/** The commit of a turn that answered; a paused task the session recorded is cleared. */
export function answeredAttempt(start: TurnStart, outcome: GraphOutcome, emit: Emit): CommitAttempt {
  const { runId, sessionId, message } = start.turn;
  const { answer: response, trace } = outcome;
  return {
    result: { response, rag_trace: trace, session_id: sessionId, pending_hitl: null, run_id: runId },
    messages: [
      { type: 'human', content: message, run_id: runId },
      { type: 'ai', content: response, rag_trace: trace, run_id: runId, tools: outcome.tools },
    ],
    end: { status: 'done' },
    options: start.hadPending ? { metadata: { [PENDING_HITL_KEY]: null, [HITL_RESUME_KEY]: null, [HITL_ROUNDS_KEY]: null } } : {},
    tell: () => {
      if (trace) emit('trace', trace);
      emit('done', { response, session_id: sessionId });
    },
    finishedThread: start.threadId,
  };
}
