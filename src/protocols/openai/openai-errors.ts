import { HttpException } from '@nestjs/common';
import type { ErrorCode } from '../../common/coded-error.js';
import type { ErrorBody } from '../../common/http-exception.filter.js';

/** The `error` object of the OpenAI API's error bodies. */
export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
  /** A failed chat turn's only: whether the user's message was kept (null: not known yet), as the service's other protocols say. */
  message_saved?: boolean | null;
}

/** An error answered in the OpenAI API's own words: its type, code and the parameter at fault. */
export class OpenAiError extends HttpException {
  constructor(
    status: number,
    message: string,
    readonly openai: { type: string; code: string | null; param?: string | null },
  ) {
    super(message, status);
  }
}

function typeFor(status: number): string {
  if (status === 401) return 'invalid_request_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The service's generic codes that the OpenAI API names in its own words (what its SDKs look for). */
const OPENAI_CODES: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'invalid_api_key',
  rate_limited: 'rate_limit_exceeded',
  not_found: 'not_found',
  route_not_found: 'not_found',
  payload_too_large: 'request_too_large',
};

function codeFor(body: ErrorBody): string {
  return OPENAI_CODES[body.code] ?? body.code;
}

/** `{error: {message, type, param, code}}` for any error of a `/v1` route, as the OpenAI API and its SDKs expect. */
export function openAiErrorObject(body: ErrorBody, exception: unknown): OpenAiErrorObject {
  if (exception instanceof OpenAiError) {
    return { message: body.message, type: exception.openai.type, param: exception.openai.param ?? null, code: exception.openai.code };
  }
  const { message_saved: saved } = body as { message_saved?: boolean | null };
  return { message: body.message, type: typeFor(body.statusCode), param: null, code: codeFor(body), ...(saved !== undefined ? { message_saved: saved } : {}) };
}

export function openAiErrorBody(body: ErrorBody, exception: unknown): { error: OpenAiErrorObject } {
  return { error: openAiErrorObject(body, exception) };
}
