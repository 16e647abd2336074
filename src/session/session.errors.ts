import { CodedError } from '../common/coded-error.js';

/** Raised for a missing session and for another user's session alike, so neither can be told apart. */
export class SessionNotFoundError extends CodedError {
  readonly code = 'session_not_found';
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} not found`);
  }
}

/** Feedback rates an answer: it is refused on the user's own messages (and on any other message that is not an answer). */
export class NotAnAnswerError extends CodedError {
  readonly code = 'invalid_request';
  constructor(messageId: string, type: string) {
    super(`Feedback is taken on answers only: message ${messageId} is ${type === 'human' ? "the user's own message" : 'not an answer'} (type ${type})`);
  }
}

export { InvalidCursorError } from '../common/keyset-cursor.js';
