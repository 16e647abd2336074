import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODES, ERROR_CODE_STATUS, type ErrorCode } from './coded-error.js';

export class ApiErrorBody {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ description: 'What was wrong, naming the field or header at fault' })
  message: string;

  @ApiProperty({
    enum: Object.keys(ERROR_CODES),
    enumName: 'ErrorCode',
    description: 'Machine-readable reason, from the table of error codes (docs/protocol.md); each route lists the codes it answers',
  })
  code: ErrorCode;

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
  403: 'Authenticated but not allowed',
  404: 'No such resource for this user',
  409: "In conflict with what is going on (a turn in progress, the index, a deleted document, the key or collection limit, a collection's rules)",
  410: 'No longer available',
  413: 'Request body (or uploaded file) too large',
  415: 'Unsupported media type',
  422: 'The content could not be read',
  429: 'Too many requests for this user; retry after the Retry-After header',
  500: 'An unexpected error; the request id finds it in the logs',
  502: 'The chat model failed or answered something unusable; the turn is not saved',
  503: "A required dependency (PostgreSQL, Redis, or the identity provider's keys) is unavailable; retry later",
  504: 'The chat model did not answer in time; the turn is not saved',
} as const satisfies Record<number, string>;

export type DocumentedErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** The codes any route may answer with a status (a request refused while it is read, authenticated or counted). */
const ANY_ROUTE_CODES: Partial<Record<DocumentedErrorStatus, readonly ErrorCode[]>> = {
  400: ['invalid_request', 'malformed_json'],
  401: ['unauthorized'],
  403: ['forbidden'],
  404: ['not_found'],
  413: ['payload_too_large'],
  415: ['unsupported_encoding'],
  429: ['rate_limited'],
  503: ['storage_unavailable', 'identity_provider_unavailable'],
};

/**
 * The codes a route answers, by status: a code names itself (under its
 * status in the table), a status stands for the codes any route answers with
 * it, or, when none does, for every code of that status.
 */
export function errorCodesByStatus(answers: readonly (DocumentedErrorStatus | ErrorCode)[]): Map<DocumentedErrorStatus, ErrorCode[]> {
  const byStatus = new Map<DocumentedErrorStatus, ErrorCode[]>();
  const add = (status: DocumentedErrorStatus, codes: readonly ErrorCode[]) => {
    const known = byStatus.get(status) ?? [];
    byStatus.set(status, [...known, ...codes.filter((code) => !known.includes(code))]);
  };
  for (const answer of answers) {
    if (typeof answer === 'string') {
      add(ERROR_CODE_STATUS[answer] as DocumentedErrorStatus, [answer]);
      continue;
    }
    const codesOfStatus = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => ERROR_CODE_STATUS[code] === answer);
    add(answer, ANY_ROUTE_CODES[answer] ?? codesOfStatus);
  }
  return byStatus;
}

/** A code of another API's vocabulary that a route answers besides the service's (the OpenAI-compatible routes' `unsupported_media_type`). */
export interface ForeignErrorCode {
  status: DocumentedErrorStatus;
  code: string;
  meaning: string;
}

/** The response's description: the status's, then each code with its meaning. */
function describeCodes(status: DocumentedErrorStatus, codes: readonly ErrorCode[], foreign: readonly ForeignErrorCode[] = []): string {
  const named = [...codes.map((code) => ({ code, meaning: ERROR_CODES[code].meaning })), ...foreign];
  return `${ERROR_DESCRIPTIONS[status]}. Codes: ${named.map(({ code, meaning }) => `\`${code}\` (${meaning})`).join('; ')}`;
}

/**
 * Documents the error answers of a route with the shared error body, always
 * as `application/json` (even on a route whose success is an SSE stream):
 * per status, the codes the route answers, named in the description and as
 * the body's `code` enum. Give a code for a route's own answers
 * (`'session_not_found'`), a status for the ones any route gives (`401`).
 */
export function ApiErrorResponses(...answers: (DocumentedErrorStatus | ErrorCode)[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ApiErrorBody),
    ...[...errorCodesByStatus(answers)].map(([status, codes]) =>
      ApiResponse({
        status,
        description: describeCodes(status, codes),
        content: {
          'application/json': {
            schema: { allOf: [{ $ref: getSchemaPath(ApiErrorBody) }, { type: 'object', properties: { code: { type: 'string', enum: codes } } }] },
          },
        },
      }),
    ),
  );
}

/**
 * The same with another API's error body (the OpenAI-compatible routes
 * answer `{error: {…}}`): the codes are in the description, with the codes
 * of that API's own vocabulary the route answers.
 */
export function ApiErrorResponsesOf(body: new () => unknown, ...answers: (DocumentedErrorStatus | ErrorCode | ForeignErrorCode)[]): MethodDecorator & ClassDecorator {
  const foreign = answers.filter((answer): answer is ForeignErrorCode => typeof answer === 'object');
  const byStatus = errorCodesByStatus(answers.filter((answer): answer is DocumentedErrorStatus | ErrorCode => typeof answer !== 'object'));
  for (const { status } of foreign) if (!byStatus.has(status)) byStatus.set(status, []);
  return applyDecorators(
    ApiExtraModels(body),
    ...[...byStatus].map(([status, codes]) =>
      ApiResponse({
        status,
        description: describeCodes(
          status,
          codes,
          foreign.filter((code) => code.status === status),
        ),
        content: { 'application/json': { schema: { $ref: getSchemaPath(body) } } },
      }),
    ),
  );
}
