import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { RequestError } from '../../common/coded-error.js';
import { buildErrorBody } from '../../common/http-exception.filter.js';
import { jsonRpcErrorBody, JsonRpcError, toMcpError } from './mcp-errors.js';

describe('MCP errors', () => {
  it("keeps a coded error's words and code, with the JSON-RPC code of its status", () => {
    expect(toMcpError(new RequestError('chunk_not_found', 'Chunk "9" not found'))).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'Chunk "9" not found',
      data: { code: 'chunk_not_found' },
    });
    expect(toMcpError(new RequestError('rate_limited', 'Too many'))).toMatchObject({ code: -32000, data: { code: 'rate_limited' } });
    expect(toMcpError(new RequestError('forbidden', 'No'))).toMatchObject({ code: -32000, data: { code: 'forbidden' } });
  });

  it('never passes on a driver message: PostgreSQL down is storage_unavailable, anything else internal_error', () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' });
    expect(toMcpError(down)).toMatchObject({ code: ErrorCode.InternalError, message: 'Database unavailable; retry shortly', data: { code: 'storage_unavailable' } });
    const log = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const pgError = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
      const error = toMcpError(pgError);
      expect(error).toBeInstanceOf(JsonRpcError);
      expect([error.code, error.message, error.data?.code]).toEqual([ErrorCode.InternalError, 'Internal error', 'internal_error']);
      expect(log).toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  it('answers HTTP-level refusals as JSON-RPC errors without an id', () => {
    expect(jsonRpcErrorBody(buildErrorBody(401, 'Missing Authorization header'))).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Missing Authorization header', data: { code: 'unauthorized' } },
      id: null,
    });
    expect(jsonRpcErrorBody(buildErrorBody(400, 'Malformed JSON in request body', 'malformed_json'))).toMatchObject({ error: { code: ErrorCode.ParseError } });
    expect(jsonRpcErrorBody(buildErrorBody(503, 'Database unavailable', 'storage_unavailable'))).toMatchObject({ error: { code: ErrorCode.InternalError } });
  });
});
