import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CodedError, ErrorCode, fallbackErrorCode } from './coded-error.js';
import { isDatabaseUnavailable } from './database-unavailable.js';
import { loggableUrl } from '../logging/secret-redaction.js';
import { currentRequestId } from '../logging/request-context.js';

export { isDatabaseUnavailable } from './database-unavailable.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  /** The error's code from the table in coded-error.ts. */
  code: ErrorCode;
  request_id?: string;
}

function reasonPhrase(status: number): string {
  const name = HttpStatus[status];
  return name
    ? name
        .toLowerCase()
        .split('_')
        .map((w) => w[0].toUpperCase() + w.slice(1))
        .join(' ')
    : 'Error';
}

function messageOf(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}

/** Express-level errors (body parsing) carry their status on the error object. */
export function bodyParserStatus(error: unknown): number | undefined {
  const e = error as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return HttpStatus.PAYLOAD_TOO_LARGE;
  if (typeof e?.type === 'string' && typeof e.status === 'number' && e.status >= 400 && e.status < 500) return e.status;
  return undefined;
}

export function bodyParserMessage(error: unknown, status: number): string {
  const e = error as { type?: string; limit?: number };
  if (status === HttpStatus.PAYLOAD_TOO_LARGE) return `Request body too large (limit ${e.limit ?? '?'} bytes)`;
  if (e?.type === 'entity.parse.failed') return 'Malformed JSON in request body';
  return (error as Error).message ?? 'Unreadable request body';
}

/** What each Content-Encoding body-parser decompresses is called in an error message. */
const COMPRESSED_BODY_NAMES: Readonly<Record<string, string>> = { gzip: 'gzip', deflate: 'deflate (zlib) data', br: 'Brotli data', zstd: 'Zstandard data' };

/**
 * Our words for a body its Content-Encoding cannot decompress, or undefined
 * for any other error. body-parser passes the decompressor's own error on
 * (zlib's "incorrect header check"), as a 400 without a `type`; its message
 * is never shown.
 */
export function undecompressableBodyMessage(error: unknown, contentEncoding: string | undefined): string | undefined {
  const e = error as { type?: unknown; status?: unknown; code?: unknown };
  if (e?.status !== HttpStatus.BAD_REQUEST || e.type !== undefined || typeof e.code !== 'string') return undefined;
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  const name = Object.hasOwn(COMPRESSED_BODY_NAMES, encoding) ? COMPRESSED_BODY_NAMES[encoding] : undefined;
  return name && `Request body is not valid ${name} (Content-Encoding: ${encoding})`;
}

/** The code of a body-parser failure (malformed JSON, too large, an encoding it cannot read). */
export function bodyParserCode(error: unknown, status: number): ErrorCode {
  const type = (error as { type?: string })?.type;
  if (type === 'entity.parse.failed') return 'malformed_json';
  return fallbackErrorCode(status);
}

/** Nest's own 404 for a path no route matches (thrown by its router as `Cannot <METHOD> <path>`). */
function isUnknownRoute(exception: HttpException): boolean {
  return exception.getStatus() === HttpStatus.NOT_FOUND && /^Cannot [A-Z]+ /.test(messageOf(exception));
}

/** Without a code, the status's fallback code from the table. */
export function buildErrorBody(status: number, message: string, code: ErrorCode = fallbackErrorCode(status), details?: Record<string, unknown>): ErrorBody {
  return { ...details, statusCode: status, error: reasonPhrase(status), message, code, request_id: currentRequestId() };
}

/** Writes an error body in another API's shape, for the routes under a path prefix (the OpenAI-compatible `/v1/`). */
export type ErrorBodyFormat = (body: ErrorBody, exception: unknown) => unknown;

const errorBodyFormats = new Map<string, ErrorBodyFormat>();

/** Routes whose path starts with `pathPrefix` answer errors in `format`'s shape (body parsing and auth failures included). */
export function registerErrorBodyFormat(pathPrefix: string, format: ErrorBodyFormat): void {
  errorBodyFormats.set(pathPrefix, format);
}

/** The error body a route at `path` answers: the shared shape, or the shape registered for its path prefix. */
export function errorBodyFor(path: string, body: ErrorBody, exception?: unknown): unknown {
  for (const [prefix, format] of errorBodyFormats) if (path.startsWith(prefix)) return format(body, exception);
  return body;
}

/** Gives every error the same JSON shape: statusCode, error, message, code, request_id (or a registered API's shape for its routes). */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const request = host.switchToHttp().getRequest<Request>();
    let status: number;
    let message: string;
    let code: ErrorCode | undefined;
    let details: Record<string, unknown> | undefined;
    if (exception instanceof HttpException) {
      status = exception.getStatus();
      message = messageOf(exception);
      code = isUnknownRoute(exception) ? 'route_not_found' : fallbackErrorCode(status);
    } else if (exception instanceof CodedError) {
      status = exception.httpStatus;
      message = exception.message;
      code = exception.code;
      details = exception.details;
      if (status >= 500) this.logger.warn({ err: exception, method: request.method, url: loggableUrl(request.originalUrl ?? request.url) }, exception.code);
    } else if (isDatabaseUnavailable(exception)) {
      status = HttpStatus.SERVICE_UNAVAILABLE;
      message = 'Database unavailable; retry shortly';
      code = 'storage_unavailable';
      this.logger.warn({ err: exception, method: request.method, url: loggableUrl(request.originalUrl ?? request.url) }, 'database unavailable');
    } else if (bodyParserStatus(exception) !== undefined) {
      status = bodyParserStatus(exception)!;
      message = bodyParserMessage(exception, status);
      code = bodyParserCode(exception, status);
    } else {
      status = HttpStatus.INTERNAL_SERVER_ERROR;
      message = 'Internal server error';
      code = 'internal_error';
      this.logger.error({ err: exception, method: request.method, url: loggableUrl(request.originalUrl ?? request.url) }, 'unhandled error: answered 500 internal_error');
    }
    if (response.headersSent) return;
    response.status(status).json(errorBodyFor(request.path ?? '', buildErrorBody(status, message, code, details), exception));
  }
}
