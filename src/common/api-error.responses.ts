import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODE_STATUS, type ErrorCode } from './coded-error.js';

export class ApiErrorBody {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ description: 'What was wrong, naming the field or header at fault' })
  message: string;

  @ApiPropertyOptional({
    enum: Object.keys(ERROR_CODE_STATUS),
    enumName: 'ErrorCode',
    description: 'Machine-readable reason, for the errors the service raises on purpose',
  })
  code?: ErrorCode;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'For `run_in_progress` (409): the run holding the session; rejoin its stream or wait for it',
  })
  run_id?: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: "For a failed chat turn: whether the user's message was kept (null: not known yet; reload the session before sending it again)",
  })
  message_saved?: boolean | null;

  @ApiProperty({ description: 'Request id, also in the x-request-id response header' })
  request_id: string;
}

export const ERROR_DESCRIPTIONS = {
  400: 'Invalid input; the message names the field, parameter or header at fault',
  401: 'Missing, malformed, expired or tampered bearer token, API key or stream ticket',
  403: 'Authenticated but not allowed (the route needs the token role "admin")',
  404: 'No such resource for this user',
  409: 'The session already has a run in progress (`run_in_progress`; `run_id` names it)',
  410: 'The run\'s events are no longer kept, or were all received already (`run_events_gone`)',
  413: 'Request body (or uploaded file) too large',
  415: 'Unsupported document type: send .txt, .md or .pdf (`unsupported_document`)',
  422: 'The document could not be read: a damaged file or one without text (`unreadable_document`)',
  429: 'Too many requests for this user; retry after the Retry-After header',
  502: 'The chat model failed or answered something unusable (`model_error`); the turn is not saved',
  503: 'A required dependency (PostgreSQL, Redis, or the identity provider\'s keys) is unavailable; retry later',
  504: 'The chat model did not answer in time (`model_timeout`); the turn is not saved',
} as const satisfies Record<number, string>;

export type DocumentedErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/**
 * Documents the error answers of a route with the shared error body, always
 * as `application/json` (even on a route whose success is an SSE stream).
 */
export function ApiErrorResponses(...statuses: DocumentedErrorStatus[]): MethodDecorator & ClassDecorator {
  return ApiErrorResponsesOf(ApiErrorBody, ...statuses);
}

/** The same, with another API's error body (the OpenAI-compatible routes answer `{error: {…}}`). */
export function ApiErrorResponsesOf(body: new () => unknown, ...statuses: DocumentedErrorStatus[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(body),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status],
        content: { 'application/json': { schema: { $ref: getSchemaPath(body) } } },
      }),
    ),
  );
}
