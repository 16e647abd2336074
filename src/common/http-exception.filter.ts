import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RunInProgressError } from '../chat/chat.errors.js';
import { InvalidCursorError, SessionNotFoundError } from '../session/session.errors.js';
import { currentRequestId } from '../logging/request-context.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  request_id?: string;
}

// 57014: statement_timeout cancelled the statement; 55P03: lock_timeout; 57P01-03: shutdown, crash, starting up; 53300: too many connections.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57014', '55P03', '57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|the database system is (starting up|shutting down)/i;

/**
 * PostgreSQL unreachable, restarting, stalled past the statement limits or
 * out of connections: the client may retry, nothing was wrong with the request.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 3; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}

/** Domain errors mapped to HTTP answers; everything not listed and not an HttpException is a 500. */
function domainStatus(error: unknown): number | undefined {
  if (error instanceof SessionNotFoundError) return HttpStatus.NOT_FOUND;
  if (error instanceof InvalidCursorError) return HttpStatus.BAD_REQUEST;
  if (error instanceof RunInProgressError) return HttpStatus.CONFLICT;
  return undefined;
}

function reasonPhrase(status: number): string {
  const name = HttpStatus[status];
  return name ? name.toLowerCase().split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ') : 'Error';
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

export function buildErrorBody(status: number, message: string): ErrorBody {
  return { statusCode: status, error: reasonPhrase(status), message, request_id: currentRequestId() };
}

/** Gives every error the same JSON shape: statusCode, error, message, request_id. */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const request = host.switchToHttp().getRequest<Request>();
    let status: number;
    let message: string;
    if (exception instanceof HttpException) {
      status = exception.getStatus();
      message = messageOf(exception);
    } else if (domainStatus(exception) !== undefined) {
      status = domainStatus(exception)!;
      message = (exception as Error).message;
    } else if (isDatabaseUnavailable(exception)) {
      status = HttpStatus.SERVICE_UNAVAILABLE;
      message = 'Database unavailable; retry shortly';
      this.logger.warn({ err: exception, method: request.method, url: request.url }, 'database unavailable');
    } else if (bodyParserStatus(exception) !== undefined) {
      status = bodyParserStatus(exception)!;
      message = bodyParserMessage(exception, status);
    } else {
      status = HttpStatus.INTERNAL_SERVER_ERROR;
      message = 'Internal server error';
      this.logger.error(
        { err: exception, method: request.method, url: request.url },
        exception instanceof Error ? exception.stack : undefined,
      );
    }
    if (response.headersSent) return;
    response.status(status).json(buildErrorBody(status, message));
  }
}
