import { Logger } from '@nestjs/common';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { CodedError, ERROR_CODE_STATUS, type ErrorCode as ServiceErrorCode } from '../../common/coded-error.js';
import { isDatabaseUnavailable, type ErrorBody } from '../../common/http-exception.filter.js';
import { currentRequestId } from '../../logging/request-context.js';

/** JSON-RPC's "server error" code (-32000 to -32099 are the implementation's; the MCP SDK answers -32000 for HTTP-level refusals). */
export const JSON_RPC_SERVER_ERROR = -32000;

/** The `data` of every JSON-RPC error this service answers on /mcp: the service's error code, as the REST API's `code`. */
export interface McpErrorData {
  code: ServiceErrorCode;
  request_id?: string;
  /** A call refused by the rate limit: seconds until the budget allows it. */
  retry_after_seconds?: number;
}

/**
 * The JSON-RPC code for a service error of `status`: InvalidParams for what
 * the arguments got wrong or named that the caller cannot read (400, 404),
 * InternalError for the service's own failures (5xx), and the server-error
 * code for the rest (401, 403, 409, 413, 429): `data.code` says which.
 */
export function jsonRpcCodeFor(status: number): number {
  if (status === 400 || status === 404) return ErrorCode.InvalidParams;
  if (status >= 500) return ErrorCode.InternalError;
  return JSON_RPC_SERVER_ERROR;
}

/**
 * A JSON-RPC error as the MCP SDK's Protocol answers a thrown error: its
 * `code`, `message` and `data`. (The SDK's McpError would do, but it prefixes
 * its message with "MCP error <code>: ", which its client adds again.)
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: McpErrorData,
  ) {
    super(message);
  }
}

function errorData(code: ServiceErrorCode, extra: Partial<McpErrorData> = {}): McpErrorData {
  const requestId = currentRequestId();
  return { code, ...(requestId ? { request_id: requestId } : {}), ...extra };
}

/** A service error as a JSON-RPC error: the message as the REST API says it, the code in `data`. */
export function serviceMcpError(code: ServiceErrorCode, message: string, extra: Partial<McpErrorData> = {}): JsonRpcError {
  return new JsonRpcError(jsonRpcCodeFor(ERROR_CODE_STATUS[code]), message, errorData(code, extra));
}

const logger = new Logger('McpServer');

/**
 * What a tool's failure answers: a coded error in its own words, PostgreSQL
 * unavailable as `storage_unavailable`, anything else as `internal_error`
 * (logged; its message, say a driver's, never reaches the client).
 */
export function toMcpError(error: unknown): JsonRpcError {
  if (error instanceof JsonRpcError) return error;
  if (error instanceof CodedError) return serviceMcpError(error.code, error.message);
  if (isDatabaseUnavailable(error)) return serviceMcpError('storage_unavailable', 'Database unavailable; retry shortly');
  logger.error({ err: error }, 'MCP tool call failed');
  return serviceMcpError('internal_error', 'Internal error');
}

/**
 * The body of an HTTP-level refusal of a /mcp request (authentication, body
 * parsing, rate of requests, an unknown method): a JSON-RPC error response
 * without an id, as the MCP SDK's transport answers its own refusals.
 */
export function jsonRpcErrorBody(body: ErrorBody): unknown {
  const code = body.code === 'malformed_json' ? ErrorCode.ParseError : jsonRpcCodeFor(body.statusCode);
  return {
    jsonrpc: '2.0',
    error: { code, message: body.message, data: { code: body.code, ...(body.request_id ? { request_id: body.request_id } : {}) } },
    id: null,
  };
}
