import { GraphRecursionError } from '@langchain/langgraph';
import { CodedError } from '../common/coded-error.js';
import { isDatabaseUnavailable } from '../common/database-unavailable.js';
import { CommitOutcomeUnknownError, isUnanswered } from '../database/commit-outcome.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { RunNotRunningError, TurnFailedError, TurnFailureCode } from './chat.errors.js';

/*
 * What a failed turn tells and records, decided without I/O: the turn's
 * orchestration (ChatService) does the commits and pending run ends these
 * decisions ask for.
 */

/** Why the turn failed, in words for the user (never a driver's or a library's text), before saying whether the message was kept. */
export function classifyFailure(error: unknown): { code: TurnFailureCode; reason: string } {
  if (error instanceof SessionNotFoundError) {
    return { code: 'session_deleted', reason: 'The session was deleted while the turn ran.' };
  }
  if (error instanceof RunNotRunningError && error.status === 'cancelled') return { code: 'cancelled', reason: 'The turn was cancelled.' };
  if (error instanceof RunNotRunningError && error.status === null) {
    return { code: 'session_deleted', reason: 'The session was deleted while the turn ran.' };
  }
  if (error instanceof RunNotRunningError) {
    return { code: 'run_lost', reason: 'This turn was given up as lost while it could not reach the database (its session may have moved on).' };
  }
  if (error instanceof TurnFailedError) return { code: error.code, reason: error.message };
  // Any other coded error (a model's, a tool's, storage's) ends the turn with its own code, status and words.
  if (error instanceof CodedError) return { code: error.code, reason: error.message };
  if (isDatabaseUnavailable(error)) {
    return { code: 'storage_unavailable', reason: 'The database did not answer in time.' };
  }
  if (error instanceof GraphRecursionError) {
    return { code: 'model_error', reason: 'The agent did not finish within its step limit.' };
  }
  return { code: 'internal_error', reason: 'The turn failed on an internal error.' };
}

/** What a failed turn tells the user of their message, after the reason. */
export function toldAfterFailure(code: TurnFailureCode, saved: boolean | null): string {
  if (saved === null) {
    return 'Whether your message was saved is not known yet (the database did not answer while it was being saved): reload the session before sending it again.';
  }
  if (code === 'cancelled') return saved ? 'Your message was saved, marked cancelled.' : 'Nothing was saved.';
  if (saved) return 'Your message was saved; retry to get an answer.';
  return code === 'session_deleted' || code === 'run_lost' ? 'Nothing was saved.' : 'Your message was NOT saved; please send it again.';
}

/** The reason as a sentence, then what became of the message. */
export function failureMessage(reason: string, told: string): string {
  return `${/[.!?。！？]$/.test(reason) ? reason : `${reason}.`} ${told}`;
}

/** What a cancelled turn tells of what it kept (`saved` null: not known yet). */
export function toldAfterCancel(saved: boolean | null, keptAnswer: boolean): string {
  if (saved) return `Your message${keptAnswer ? ' and the answer so far were' : ' was'} saved, marked cancelled.`;
  return saved === false ? 'Nothing was saved.' : 'Whether your message was saved is not known yet: reload the session.';
}

/** The error a stateless turn (nothing stored) fails with; `signal` is the turn's, aborted when the client left or the instance shuts down. */
export function statelessFailure(error: unknown, signal: AbortSignal): TurnFailedError {
  if (signal.aborted && signal.reason instanceof CodedError) return new TurnFailedError(signal.reason.code, `${signal.reason.message} Nothing was saved.`, false);
  if (signal.aborted) return new TurnFailedError('cancelled', 'The turn was cancelled. Nothing was saved.', false);
  const { code, reason } = classifyFailure(error);
  return new TurnFailedError(code, failureMessage(reason, 'Nothing was saved.'), false);
}

/** How a failed run is recorded when it ends: a turn the instance's shutdown cut off is `interrupted` (no question waits for the user). */
export interface FailedRunEnd {
  status: 'error' | 'interrupted';
  error: string;
}

/** What the user is told of a failed turn: the code, the reason, and whether the message is kept (null: not known yet). */
export interface FailureVerdict {
  code: TurnFailureCode;
  reason: string;
  saved: boolean | null;
}

/**
 * What to do about a failed turn:
 * - `landed`: the turn's own commit landed after all (its answer was lost on the way back); the turn stands;
 * - `told`: tell the verdict; `endLater` is the run's end to record in the background (the database did not answer), or null;
 * - `keep`: keep the user's message, marked failed, with the run's `end` in one transaction, then tell `saved: true`,
 *   or ask `afterKeepFailed`. `readBack`: the turn's COMMIT got no answer, so the keeping also reads back what landed
 *   and must be bounded in time.
 */
export type FailureDecision =
  | { kind: 'landed' }
  | ({ kind: 'told'; endLater: FailedRunEnd | null } & FailureVerdict)
  | { kind: 'keep'; code: TurnFailureCode; reason: string; end: FailedRunEnd; readBack: boolean };

function endedAsLanded(status: string | null | undefined): boolean {
  return status === 'done' || status === 'interrupted';
}

/**
 * Decides a failed turn's outcome. `cause` is why the turn stopped (the abort reason of its run, when it was aborted,
 * else `error`); `error` is what the turn threw; `commitSent` whether its own commit was sent.
 */
export function decideFailure(cause: unknown, error: unknown, commitSent: boolean): FailureDecision {
  // How the run's record said it ended, when the turn stopped on reading it (a heartbeat, its own commit).
  const notRunning = [cause, error].find((e): e is RunNotRunningError => e instanceof RunNotRunningError);
  if (commitSent && endedAsLanded(notRunning?.status)) return { kind: 'landed' };
  // Cancelled from another instance that could not reach this one: the cancel ended the run and kept the message.
  if (notRunning?.status === 'cancelled') return { kind: 'told', ...classifyFailure(notRunning), saved: true, endLater: null };
  const { code, reason } = classifyFailure(cause);
  if (code === 'session_deleted' || code === 'run_lost') return { kind: 'told', code, reason, saved: false, endLater: null };
  const readBack = error instanceof CommitOutcomeUnknownError;
  const end: FailedRunEnd = { status: code === 'shutting_down' ? 'interrupted' : 'error', error: reason };
  // The database stopped answering (no reply, or no connection in time) before anything of the turn was sent to
  // commit: nothing is stored, and trying to store the message would only wait for another limit while it lasts.
  if (!readBack && isUnanswered(cause)) return { kind: 'told', code, reason, saved: false, endLater: end };
  return { kind: 'keep', code, reason, end, readBack };
}

/**
 * Decides a failed turn's outcome when keeping its message failed with `saveError`: the run may have been ended
 * meanwhile (by its own commit, which then landed; by a cancel, which kept the message), its session deleted, or the
 * database did not answer (the end is then recorded later, and a commit without an answer may still land).
 */
export function afterKeepFailed(keep: Extract<FailureDecision, { kind: 'keep' }>, saveError: unknown, commitSent: boolean): FailureDecision {
  const ended = saveError instanceof RunNotRunningError ? saveError.status : undefined;
  if (commitSent && endedAsLanded(ended)) return { kind: 'landed' };
  if (ended === 'cancelled') return { kind: 'told', ...classifyFailure(saveError), saved: true, endLater: null };
  if (saveError instanceof SessionNotFoundError || saveError instanceof RunNotRunningError) {
    return { kind: 'told', ...classifyFailure(saveError), saved: false, endLater: null };
  }
  const unknown = keep.readBack || saveError instanceof CommitOutcomeUnknownError;
  return { kind: 'told', code: keep.code, reason: keep.reason, saved: unknown ? null : false, endLater: keep.end };
}
