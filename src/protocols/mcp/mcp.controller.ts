import { All, Controller, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Request, Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { RequestError } from '../../common/coded-error.js';
import { KnowledgeMcpServer } from './knowledge-mcp-server.js';
import { McpExceptionFilter, MCP_PATH } from './protected-resource.js';

/**
 * Any method but POST. GET and DELETE of a stateless server: there is no
 * session to stream to or end (the SDK's client reads 405 as "no stream");
 * the others are no part of the Streamable HTTP transport.
 */
function methodNotAllowed(res: Response): RequestError {
  res.setHeader('Allow', 'POST');
  return new RequestError('not_supported', 'Method not allowed: this MCP server is stateless, POST only');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A batch without the cancellations of its own requests: the SDK's
 * Protocol drops the answer of a cancelled request, and its transport waits
 * for an answer to every request of the POST, so such a batch would never be
 * answered. Each POST is a server of its own, which answers its requests
 * quickly; the request is answered instead.
 */
function withoutSelfCancellations(body: unknown): unknown {
  if (!Array.isArray(body)) return body;
  const ids = body.filter((message) => isRecord(message) && typeof message.method === 'string' && message.id !== undefined).map((message) => (message as { id: unknown }).id);
  const requestIds = new Set(ids);
  // The transport answers by id: the second request of an id would go unanswered.
  if (requestIds.size !== ids.length) throw new RequestError('invalid_request', 'A request id appears twice in this batch: give each request of a batch its own id');
  const selfCancellation = (message: unknown) =>
    isRecord(message) && message.method === 'notifications/cancelled' && message.id === undefined && isRecord(message.params) && requestIds.has(message.params.requestId);
  return body.filter((message) => !selfCancellation(message));
}

/**
 * `/mcp`: the knowledge base as an MCP server over Streamable HTTP,
 * stateless: each POST gets a server and transport of its own (the MCP SDK's
 * stateless example), built for the authenticated caller. The app's JSON
 * body parser has read the body already, so it is handed to the transport.
 * Errors before the transport (authentication, body, rate) answer as JSON-RPC
 * errors too, a 401 with the `WWW-Authenticate` challenge MCP clients follow.
 * Not in the OpenAPI document: JSON-RPC is not described by it
 * (docs/client-protocols.md describes the tools).
 */
@ApiExcludeController()
@UseFilters(McpExceptionFilter)
@Controller(MCP_PATH.slice(1))
export class McpController {
  constructor(private readonly servers: KnowledgeMcpServer) {}

  @Post()
  async post(@CurrentUser() user: AuthUser, @Req() req: Request, @Res() res: Response): Promise<void> {
    const server = this.servers.create(user, res);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, withoutSelfCancellations(req.body));
  }

  /** Every other method (GET, DELETE, PUT, PATCH, an OPTIONS that is no CORS preflight, which is answered before routing): what is allowed. Declared after POST, which Express then matches first. */
  @All()
  otherMethods(@Res({ passthrough: true }) res: Response): never {
    throw methodNotAllowed(res);
  }
}
