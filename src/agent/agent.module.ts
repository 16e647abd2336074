import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentFactory } from './agent.factory.js';
import { CheckpointerProvider } from './checkpointer.provider.js';
import { ModelsModule } from '../models/models.module.js';
import { KnowledgeToolModule } from './tools/knowledge/knowledge-tool.module.js';
import { McpToolModule } from './tools/mcp/mcp-tool.module.js';
import { ToolRegistry } from './tools/tool-registry.service.js';
import { WeatherToolModule } from './tools/weather/weather-tool.module.js';

@Module({
  imports: [DiscoveryModule, ModelsModule, KnowledgeToolModule, WeatherToolModule, McpToolModule],
  providers: [ToolRegistry, CheckpointerProvider, AgentFactory],
  exports: [AgentFactory, CheckpointerProvider, ToolRegistry, ModelsModule],
})
export class AgentModule {}
