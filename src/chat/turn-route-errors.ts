import type { DocumentedErrorStatus } from '../common/api-error.responses.js';
import type { ErrorCode } from '../common/coded-error.js';

/** What a route that runs a whole turn and answers it (POST /api/chat, POST /v1/chat/completions) may answer instead. */
export const WHOLE_TURN_ERRORS: ReadonlyArray<DocumentedErrorStatus | ErrorCode> = [
  400,
  401,
  'session_not_found',
  'collection_not_found',
  'session_deleted',
  'run_in_progress',
  'cancelled',
  413,
  429,
  'model_error',
  503,
  'run_lost',
  'shutting_down',
  'model_timeout',
];
