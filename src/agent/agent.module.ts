import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AgentFactory } from './agent.factory.js';
import { CheckpointerProvider } from './checkpointer.provider.js';
import { createChatModel, FAST_MODEL, MAIN_MODEL } from './models/chat-models.js';
import { KnowledgeToolModule } from './tools/knowledge/knowledge-tool.module.js';
import { ToolRegistry } from './tools/tool-registry.service.js';
import { WeatherToolModule } from './tools/weather/weather-tool.module.js';

@Module({
  imports: [DiscoveryModule, KnowledgeToolModule, WeatherToolModule],
  providers: [
    { provide: MAIN_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'main') },
    { provide: FAST_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'fast') },
    ToolRegistry,
    CheckpointerProvider,
    AgentFactory,
  ],
  exports: [AgentFactory, CheckpointerProvider, ToolRegistry, MAIN_MODEL, FAST_MODEL],
})
export class AgentModule {}
