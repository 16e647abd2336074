export class RunInProgressError extends Error {
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} already has a turn in progress; wait for it to finish (or rejoin its stream) and try again`);
  }
}

/** The model failed or did not answer in time; the human message is kept. */
export class ModelFailureError extends Error {
  constructor(
    readonly code: 'model_timeout' | 'model_error',
    message: string,
  ) {
    super(message);
  }
}
