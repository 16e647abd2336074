import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { LOCAL_ROUTING_KEY } from '../../models/local-tool-routing.js';
import { AgentTool, AgentToolPlugin } from './agent-tool.js';

interface PluginTools {
  plugin: AgentToolPlugin;
  /** The plug-in's `toolsVersion()` when `tools` were created. */
  version?: number;
  tools: StructuredToolInterface[];
}

/**
 * Collects every @AgentTool() provider of the application at start-up and
 * builds their tools once; a plug-in whose tools change (`toolsVersion`)
 * has them built again when its version moves, and `version` counts the
 * tool sets the agent has been given.
 */
@Injectable()
export class ToolRegistry implements OnApplicationBootstrap {
  private readonly logger = new Logger(ToolRegistry.name);
  private plugins?: PluginTools[];
  private built: StructuredToolInterface[] = [];
  private builtVersion = 0;

  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    this.refresh();
  }

  private discover(): PluginTools[] {
    if (this.plugins) return this.plugins;
    const found = this.discovery
      .getProviders({ metadataKey: AgentTool.KEY })
      .map((wrapper) => wrapper.instance as AgentToolPlugin | undefined)
      .filter((instance): instance is AgentToolPlugin => !!instance && typeof instance.create === 'function');
    const names = new Set<string>();
    this.plugins = found
      .filter((plugin) => {
        if (names.has(plugin.name)) {
          this.logger.warn(`tool ${plugin.name} is registered twice; keeping the first`);
          return false;
        }
        names.add(plugin.name);
        return true;
      })
      .map((plugin) => ({ plugin, tools: [] }));
    return this.plugins;
  }

  /** Builds the tools of the plug-ins never built or whose version moved; true when the set changed. */
  private refresh(): boolean {
    let changed = false;
    for (const entry of this.discover()) {
      const version = entry.plugin.toolsVersion?.();
      if (this.builtVersion > 0 && entry.version === version) continue;
      entry.version = version;
      entry.tools = this.create(entry.plugin);
      changed = true;
    }
    if (!changed) return false;
    const toolNames = new Set<string>();
    this.built = this.plugins!.flatMap(({ tools }) =>
      tools.filter((tool) => {
        if (toolNames.has(tool.name)) {
          this.logger.warn(`tool ${tool.name} is registered twice; keeping the first`);
          return false;
        }
        toolNames.add(tool.name);
        return true;
      }),
    );
    this.builtVersion += 1;
    this.logger.log(`agent tools: ${this.built.map((tool) => tool.name).join(', ') || 'none'}`);
    return true;
  }

  private create(plugin: AgentToolPlugin): StructuredToolInterface[] {
    const created = plugin.create();
    return (Array.isArray(created) ? created : [created]).map((built) => {
      const tool = built as StructuredToolInterface & { metadata?: Record<string, unknown> };
      // The offline model finds a tool's routing hint on the tool it is bound to.
      if (plugin.localRouting) tool.metadata = { ...tool.metadata, [LOCAL_ROUTING_KEY]: plugin.localRouting };
      return tool;
    });
  }

  /** Which tool set `tools` is: it moves when a plug-in's tools changed. */
  get version(): number {
    this.refresh();
    return this.builtVersion;
  }

  get toolNames(): string[] {
    return this.tools.map((tool) => tool.name);
  }

  /** The system prompt's lines for every tool. */
  get promptRules(): string[] {
    this.refresh();
    return this.plugins!.flatMap(({ plugin }) => plugin.promptRules);
  }

  /** The current tools; each reads its turn from its run config. */
  get tools(): StructuredToolInterface[] {
    this.refresh();
    return this.built;
  }
}
