export class RunInProgressError extends Error {
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} already has a turn in progress; wait for it to finish (or rejoin its stream) and try again`);
  }
}

/** The run no longer holds its session (it was given up as abandoned): it may not commit. */
export class RunNotRunningError extends Error {
  constructor(
    readonly runId: string,
    readonly status: string | null,
  ) {
    super(`run ${runId} is no longer running (${status ?? 'gone'})`);
  }
}

/**
 * Why a turn ended without an answer: the model failed or did not answer in
 * time, the database could not be reached, or the session was deleted while
 * the turn ran. `messageSaved` tells whether the user's message was kept.
 */
export type TurnFailureCode = 'model_error' | 'model_timeout' | 'database_unavailable' | 'session_deleted' | 'run_lost';

export class TurnFailedError extends Error {
  constructor(
    readonly code: TurnFailureCode,
    message: string,
    /** Null when it is not known: the turn's own commit was in flight when the database stopped answering. */
    readonly messageSaved: boolean | null,
  ) {
    super(message);
  }
}
