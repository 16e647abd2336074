import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { ChatRequestContext } from '../../chat/chat-request-context.js';
import { AgentTool, AgentToolFactory } from './agent-tool.js';

/** Collects every @AgentTool() provider of the application. */
@Injectable()
export class ToolRegistry implements OnApplicationBootstrap {
  private readonly logger = new Logger(ToolRegistry.name);
  private factories: AgentToolFactory[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    const found = this.discovery
      .getProviders({ metadataKey: AgentTool.KEY })
      .map((wrapper) => wrapper.instance as AgentToolFactory | undefined)
      .filter((instance): instance is AgentToolFactory => !!instance && typeof instance.create === 'function');
    const names = new Set<string>();
    this.factories = found.filter((factory) => {
      if (names.has(factory.name)) {
        this.logger.warn(`tool ${factory.name} is registered twice; keeping the first`);
        return false;
      }
      names.add(factory.name);
      return true;
    });
    this.logger.log(`agent tools: ${[...names].join(', ') || 'none'}`);
  }

  get toolNames(): string[] {
    return this.factories.map((factory) => factory.name);
  }

  /** The turn's tools, each bound to its context. */
  createTools(context: ChatRequestContext): StructuredToolInterface[] {
    return this.factories.map((factory) => factory.create(context));
  }
}
