import { Module, OnModuleInit } from '@nestjs/common';
import { registerErrorBodyFormat } from '../../common/http-exception.filter.js';
import { KnowledgeModule } from '../../knowledge/public-api.js';
import { KnowledgeMcpServer } from './knowledge-mcp-server.js';
import { jsonRpcErrorBody } from './mcp-errors.js';
import { McpController } from './mcp.controller.js';
import { MCP_PATH, McpExceptionFilter, ProtectedResourceController } from './protected-resource.js';

/** The knowledge base as an MCP server at `/mcp` (Streamable HTTP, stateless), with its RFC 9728 metadata. */
@Module({
  imports: [KnowledgeModule],
  controllers: [McpController, ProtectedResourceController],
  providers: [KnowledgeMcpServer, McpExceptionFilter],
})
export class McpModule implements OnModuleInit {
  onModuleInit(): void {
    // Every error of /mcp, auth, rate limit and body parsing included, answers as a JSON-RPC error.
    registerErrorBodyFormat(MCP_PATH, jsonRpcErrorBody);
  }
}
