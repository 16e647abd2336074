import { CodedError } from '../common/coded-error.js';

/** Raised for a missing session and for another user's session alike, so neither can be told apart. */
export class SessionNotFoundError extends CodedError {
  readonly code = 'session_not_found';
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} not found`);
  }
}

export { InvalidCursorError } from '../common/keyset-cursor.js';
