import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { LOCAL_ROUTING_KEY } from '../../models/local-tool-routing.js';
import { AgentTool, AgentToolPlugin } from './agent-tool.js';

/** Collects every @AgentTool() provider of the application, once, at start-up. */
@Injectable()
export class ToolRegistry implements OnApplicationBootstrap {
  private readonly logger = new Logger(ToolRegistry.name);
  private plugins: AgentToolPlugin[] = [];
  private built?: StructuredToolInterface[];

  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    this.discover();
  }

  private discover(): AgentToolPlugin[] {
    if (this.built) return this.plugins;
    const found = this.discovery
      .getProviders({ metadataKey: AgentTool.KEY })
      .map((wrapper) => wrapper.instance as AgentToolPlugin | undefined)
      .filter((instance): instance is AgentToolPlugin => !!instance && typeof instance.create === 'function');
    const names = new Set<string>();
    this.plugins = found.filter((plugin) => {
      if (names.has(plugin.name)) {
        this.logger.warn(`tool ${plugin.name} is registered twice; keeping the first`);
        return false;
      }
      names.add(plugin.name);
      return true;
    });
    const toolNames = new Set<string>();
    this.built = this.plugins.flatMap((plugin) => {
      const created = plugin.create();
      return (Array.isArray(created) ? created : [created]).flatMap((built) => {
        const tool = built as StructuredToolInterface & { metadata?: Record<string, unknown> };
        if (toolNames.has(tool.name)) {
          this.logger.warn(`tool ${tool.name} is registered twice; keeping the first`);
          return [];
        }
        toolNames.add(tool.name);
        // The offline model finds a tool's routing hint on the tool it is bound to.
        if (plugin.localRouting) tool.metadata = { ...tool.metadata, [LOCAL_ROUTING_KEY]: plugin.localRouting };
        return [tool];
      });
    });
    this.logger.log(`agent tools: ${this.built.map((tool) => tool.name).join(', ') || 'none'}`);
    return this.plugins;
  }

  get toolNames(): string[] {
    return this.tools.map((tool) => tool.name);
  }

  /** The system prompt's lines for every tool. */
  get promptRules(): string[] {
    return this.discover().flatMap((plugin) => plugin.promptRules);
  }

  /** The tools, built once; each reads its turn from its run config. */
  get tools(): StructuredToolInterface[] {
    this.discover();
    return this.built!;
  }
}
