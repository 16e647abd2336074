import { ERROR_CODES, errorCodeStatus, type ErrorCode } from '@agentic-rag/client';
import { ApiError, describeError, type Schemas } from '../api';

/** The user-facing text of an SSE `error` event: read like the refused request it equals (the status of its code, from the server's table). */
export function describeStreamError(code: ErrorCode, message: string): string {
  return describeError(code in ERROR_CODES ? errorCodeStatus(code) : 500, { code, message });
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
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }, onUnauthorized: (reason?: string) => void): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.status === 401) onUnauthorized((result.error as { message?: string } | undefined)?.message);
  throw new ApiError(result.response.status, result.error as Schemas['ApiErrorBody'] | undefined);
}
