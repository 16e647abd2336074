import { Module } from '@nestjs/common';
import { McpServersController } from './mcp-servers.controller.js';
import { McpServers } from './mcp-servers.service.js';
import { McpTools } from './mcp.tool.js';

@Module({ controllers: [McpServersController], providers: [McpServers, McpTools] })
export class McpToolModule {}
