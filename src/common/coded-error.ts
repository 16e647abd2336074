/**
 * The one table of error codes: every error body the service answers, and
 * every SSE `error` event, carries one of these codes. Each code says what
 * it answers: the HTTP status (the exception filter reads it) and a short
 * meaning (the OpenAPI document and docs/protocol.md list it). For the
 * failures of a chat turn the SSE `error` event's `code` is the same string.
 * A code without a status does not compile.
 */
export const ERROR_CODES = {
  // any route: a request refused before or while it is read
  invalid_request: { status: 400, meaning: 'The body, a parameter or a header is invalid; the message names the one at fault' },
  malformed_json: { status: 400, meaning: 'The request body is not well-formed JSON' },
  payload_too_large: { status: 413, meaning: 'The request body, or an uploaded file, is over the size limit' },
  unsupported_encoding: { status: 415, meaning: "The request body's media type (not JSON), Content-Encoding or charset is not supported" },
  unauthorized: { status: 401, meaning: 'Missing, malformed, expired or revoked bearer token, API key or stream ticket' },
  forbidden: { status: 403, meaning: 'Authenticated but not allowed (an admin-only route, or an API key doing what only a user token may)' },
  rate_limited: { status: 429, meaning: 'Too many requests for this user or API key; retry after the Retry-After header' },
  route_not_found: { status: 404, meaning: 'No route for this method and path' },
  // any module: a resource of the caller's that does not exist (or is another user's)
  not_found: { status: 404, meaning: 'No such resource for this user' },
  // session
  session_not_found: { status: 404, meaning: 'No such session for this user' },
  message_not_found: { status: 404, meaning: 'No such message in this session' },
  invalid_cursor: { status: 400, meaning: 'The page cursor is malformed or belongs to another listing' },
  // chat runs
  run_not_found: { status: 404, meaning: 'No such run for this user' },
  run_in_progress: { status: 409, meaning: 'The session already has a turn in progress; `run_id` names it' },
  // a chat turn the user cancelled (POST /api/chat/runs/:run_id/cancel)
  cancelled: { status: 409, meaning: 'The turn was cancelled by the user' },
  run_events_gone: { status: 410, meaning: "The run's events are no longer kept, or were all received already" },
  run_events_unavailable: { status: 503, meaning: "The run's events cannot be read now (Redis unavailable); retry shortly" },
  // a chat turn that ended without an answer (HTTP status of POST /api/chat; SSE `error` code of a stream)
  model_error: { status: 502, meaning: 'The chat model failed or answered something unusable; the turn is not saved' },
  model_timeout: { status: 504, meaning: 'The chat model did not answer in time; the turn is not saved' },
  storage_unavailable: { status: 503, meaning: 'PostgreSQL is unavailable; retry shortly' },
  session_deleted: { status: 404, meaning: 'The session was deleted while the turn ran' },
  run_lost: { status: 503, meaning: 'The turn was given up as lost (its instance stopped)' },
  internal_error: { status: 500, meaning: 'An unexpected error; the request id finds it in the logs' },
  // SSE only: a followed run ended but its last events were not kept
  events_incomplete: {
    status: 503,
    meaning: 'The followed run ended but its last events were not kept, or some of its events were lost by the event store (a Redis failover): reload the session',
  },
  // the LangGraph Server API (/langgraph)
  thread_not_found: { status: 404, meaning: 'No such thread (session) for this user' },
  assistant_not_found: { status: 404, meaning: 'No such assistant: this service serves the graph `agent`' },
  thread_exists: { status: 409, meaning: 'A thread with this id exists already (`if_exists: "raise"`)' },
  nothing_to_resume: { status: 409, meaning: 'The thread has no interrupt waiting for `command.resume`' },
  checkpoint_not_found: { status: 404, meaning: 'No such checkpoint in this thread' },
  not_supported: { status: 405, meaning: 'This part of the API is not served here (LangGraph crons, store, assistant changes…; GET and DELETE of the stateless /mcp)' },
  // knowledge
  invalid_document_name: { status: 400, meaning: "The document's file name is not acceptable" },
  unsupported_document: { status: 415, meaning: 'Unsupported document type: send .txt, .md, .pdf, .docx, .xlsx, .csv or .html (macro-enabled Office files are refused)' },
  unreadable_document: { status: 422, meaning: 'The document could not be read: a damaged file or one without text' },
  // a document over a parse limit: extracted text, pages, chunks, or the parse's time or memory (never retried)
  document_too_large: { status: 413, meaning: 'The document is over a parse limit (text, pages, chunks, time or memory)' },
  document_not_found: { status: 404, meaning: 'No such document in the knowledge base' },
  chunk_not_found: { status: 404, meaning: 'No such chunk, or one of a collection the caller cannot read' },
  ingest_job_not_found: { status: 404, meaning: 'No such ingest job' },
  // the knowledge base is indexed in another embedding space than this instance's configuration
  index_space_mismatch: { status: 409, meaning: "The knowledge base is indexed in another embedding space than this instance's" },
  // an ingest job that failed for a passing reason on its every attempt (storage or embeddings endpoint unavailable)
  ingest_failed: { status: 503, meaning: 'The ingest job failed on every attempt for a passing reason (storage or embeddings unavailable)' },
  // an ingest job waited for (wait=true) whose document (or collection) was deleted before the job ended: nothing is stored
  ingest_cancelled: { status: 409, meaning: 'The document (or its collection) was deleted before its ingest job ended: nothing is stored' },
  // knowledge collections: one the caller cannot read is not found (its existence is not disclosed)
  collection_not_found: { status: 404, meaning: 'No such knowledge collection, or one the caller cannot read' },
  collection_forbidden: { status: 403, meaning: 'The caller reads the collection, but its role there does not allow this (editor: documents; owner: access, rename, delete)' },
  collection_creation_forbidden: { status: 403, meaning: 'Only administrators may create collections here (KNOWLEDGE_COLLECTION_CREATORS=admins)' },
  collection_limit: { status: 409, meaning: 'The user has created as many collections as allowed: delete one first' },
  collection_owner_required: { status: 409, meaning: "A collection's access list must keep at least one owner entry" },
  default_collection_protected: { status: 409, meaning: 'The default collection cannot be deleted or renamed' },
  // auth
  api_key_not_found: { status: 404, meaning: 'No such API key for this user' },
  api_key_limit: { status: 409, meaning: 'The user has as many live API keys as allowed: revoke one first' },
  // the identity provider's keys (JWT_JWKS_URL) could not be fetched for an RS256/ES256 token
  identity_provider_unavailable: { status: 503, meaning: "The identity provider's keys could not be fetched; retry later" },
  // the instance is draining for shutdown: a new turn is refused (with Retry-After), a turn that outlasts the drain ends with it
  shutting_down: { status: 503, meaning: 'The instance is shutting down: no new turns (retry after Retry-After, on another instance)' },
} as const satisfies Record<string, { status: 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | 504; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The HTTP status of each code (the table above, without the meanings). */
export const ERROR_CODE_STATUS = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status])) as {
  readonly [Code in ErrorCode]: (typeof ERROR_CODES)[Code]['status'];
};

/** The code an HTTP error raised without one answers with (Nest's own, a pipe's, multer's): by its status. */
const FALLBACK_CODES: Readonly<Partial<Record<number, ErrorCode>>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_encoding',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'storage_unavailable',
};

/** The code for an error that came without one; a status outside the table's falls back to `invalid_request` (4xx) or `internal_error`. */
export function fallbackErrorCode(status: number): ErrorCode {
  return FALLBACK_CODES[status] ?? (status < 500 ? 'invalid_request' : 'internal_error');
}

/** An error with a code of the table; its message is written for the client and never carries driver text. */
export abstract class CodedError extends Error {
  abstract readonly code: ErrorCode;
  /** Fields the error body carries beside its message (say the `run_id` a 409 points at). */
  readonly details?: Record<string, unknown>;

  get httpStatus(): number {
    return ERROR_CODE_STATUS[this.code];
  }
}

/** A request refused with a code of the table: what a route, guard or pipe throws instead of Nest's HTTP exceptions. */
export class RequestError extends CodedError {
  /** Several messages (a pipe's list of problems) are joined with `; `, as the error body's message always was. */
  constructor(
    readonly code: ErrorCode,
    message: string | readonly string[],
  ) {
    super(typeof message === 'string' ? message : message.join('; '));
  }
}
