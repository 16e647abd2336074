import { CodedError, ErrorCode } from '../common/coded-error.js';

export class RunInProgressError extends CodedError {
  readonly code = 'run_in_progress';
  override readonly details: { run_id: string | null };
  constructor(
    readonly sessionId: string,
    readonly runId: string | null,
  ) {
    super(`Session ${sessionId} already has a turn in progress${runId ? ` (run ${runId})` : ''}; wait for it to finish, rejoin its stream or cancel it, and try again`);
    this.details = { run_id: runId };
  }
}

/** The run no longer holds its session (it was given up as abandoned): it may not commit. */
export class RunNotRunningError extends CodedError {
  readonly code = 'run_lost';
  constructor(
    readonly runId: string,
    readonly status: string | null,
  ) {
    super(`run ${runId} is no longer running (${status ?? 'gone'})`);
  }
}

/**
 * The code a chat turn ends with instead of an answer: the SSE `error`
 * event's `code`, the HTTP error body's `code`. Mostly `model_error`,
 * `model_timeout`, `storage_unavailable`, `session_deleted`, `run_lost` or
 * `internal_error`; a tool's own coded error keeps its code.
 */
export type TurnFailureCode = ErrorCode;

/**
 * Why a turn ended without an answer: the model failed or did not answer in
 * time, the database could not be reached, the session was deleted while
 * the turn ran, the run was given up as lost, or a bug. `messageSaved` tells
 * whether the user's message was kept.
 */
export class TurnFailedError extends CodedError {
  /** The HTTP error body carries `message_saved`, as the SSE `error` event does. */
  override readonly details: { message_saved: boolean | null };
  constructor(
    readonly code: TurnFailureCode,
    message: string,
    /** Null when it is not known: a COMMIT got no answer (the turn's, or the one keeping the message), and reading back what landed did not answer either. */
    readonly messageSaved: boolean | null,
  ) {
    super(message);
    this.details = { message_saved: messageSaved };
  }
}
