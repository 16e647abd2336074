import { ApiError, describeError, type Schemas } from '../api';

type ErrorCode = Schemas['ErrorCode'];

/** The HTTP status each code stands for (src/common/coded-error.ts), so an SSE `error` event reads like the refused request it equals. */
const CODE_STATUS: Record<ErrorCode, number> = {
  not_found: 404,
  session_not_found: 404,
  invalid_cursor: 400,
  run_in_progress: 409,
  cancelled: 409,
  run_events_gone: 410,
  run_events_unavailable: 503,
  model_error: 502,
  model_timeout: 504,
  storage_unavailable: 503,
  session_deleted: 404,
  run_lost: 503,
  internal_error: 500,
  events_incomplete: 503,
  invalid_document_name: 400,
  unsupported_document: 415,
  unreadable_document: 422,
  document_too_large: 413,
  index_space_mismatch: 409,
  ingest_failed: 503,
  ingest_cancelled: 409,
  identity_provider_unavailable: 503,
  shutting_down: 503,
};

/** The user-facing text of an SSE `error` event. */
export function describeStreamError(code: ErrorCode, message: string): string {
  return describeError(CODE_STATUS[code] ?? 500, { code, message });
}

/** The user-facing text of anything a call threw. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiError) return describeError(error.status, error.body);
  if (error instanceof TypeError) return 'The service cannot be reached. Check the connection and try again.';
  return error instanceof Error ? error.message : 'Something went wrong.';
}

/**
 * The data of an openapi-fetch result, or an ApiError with its status and body.
 * A 401 also calls `onUnauthorized` (the token expired: back to sign-in).
 */
export function unwrap<T>(
  result: { data?: T; error?: unknown; response: Response },
  onUnauthorized: () => void,
): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.status === 401) onUnauthorized();
  throw new ApiError(result.response.status, result.error as Schemas['ApiErrorBody'] | undefined);
}
