/**
 * Every error a module throws on purpose carries a code from this table,
 * and the table says what it answers: the HTTP status (the exception filter
 * reads it) and, for the failures of a chat turn, the SSE `error` event's
 * `code`, which is the same string. A code without a status does not
 * compile.
 */
export const ERROR_CODE_STATUS = {
  // any module: a resource of the caller's that does not exist (or is another user's)
  not_found: 404,
  // session
  session_not_found: 404,
  invalid_cursor: 400,
  // chat runs
  run_in_progress: 409,
  // a chat turn the user cancelled (POST /api/chat/runs/:run_id/cancel)
  cancelled: 409,
  run_events_gone: 410,
  run_events_unavailable: 503,
  // a chat turn that ended without an answer (HTTP status of POST /api/chat; SSE `error` code of a stream)
  model_error: 502,
  model_timeout: 504,
  storage_unavailable: 503,
  session_deleted: 404,
  run_lost: 503,
  internal_error: 500,
  // SSE only: a followed run ended but its last events were not kept
  events_incomplete: 503,
  // knowledge
  invalid_document_name: 400,
  unsupported_document: 415,
  unreadable_document: 422,
  // a document over a parse limit: extracted text, pages, chunks, or the parse's time or memory (never retried)
  document_too_large: 413,
  // the knowledge base is indexed in another embedding space than this instance's configuration
  index_space_mismatch: 409,
  // an ingest job that failed for a passing reason on its every attempt (storage or embeddings endpoint unavailable)
  ingest_failed: 503,
  // an ingest job waited for (wait=true) whose document was deleted before the job ended: nothing is stored
  ingest_cancelled: 409,
  // auth: the identity provider's keys (JWT_JWKS_URL) could not be fetched for an RS256/ES256 token
  identity_provider_unavailable: 503,
  // the instance is draining for shutdown: a new turn is refused (with Retry-After), a turn that outlasts the drain ends with it
  shutting_down: 503,
} as const satisfies Record<string, 400 | 404 | 409 | 410 | 413 | 415 | 422 | 500 | 502 | 503 | 504>;

export type ErrorCode = keyof typeof ERROR_CODE_STATUS;

/** An error with a code of the table; its message is written for the client and never carries driver text. */
export abstract class CodedError extends Error {
  abstract readonly code: ErrorCode;
  /** Fields the error body carries beside its message (say the `run_id` a 409 points at). */
  readonly details?: Record<string, unknown>;

  get httpStatus(): number {
    return ERROR_CODE_STATUS[this.code];
  }
}
