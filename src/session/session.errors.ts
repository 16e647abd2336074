/** Raised for a missing session and for another user's session alike, so neither can be told apart. */
export class SessionNotFoundError extends Error {
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} not found`);
  }
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is invalid: pass the next_cursor of a previous page');
  }
}
