import { DiscoveryService } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { LocalToolRouting } from '../../models/local-tool-routing.js';

/**
 * A tool the agent may call: a plug-in. One provider per tool, each in its
 * own module, marked with @AgentTool(); the registry discovers them, and
 * everything the agent knows about a tool comes from here: the system prompt
 * gets its `promptRules`, the offline model its `localRouting`. No core file
 * names a tool.
 *
 * `create` runs once, when the tools are first needed (again only for a
 * plug-in with `toolsVersion`, when that changes). The tool reads the
 * turn it runs for from its runtime (the second argument of its function,
 * `ToolRuntime<…, AgentRunContext>`): `runtime.context.turn`. What it leaves
 * for the graph state (a trace, a question for the user) it returns as its
 * artifact (`responseFormat: 'content_and_artifact'`, AgentToolArtifact).
 */
export interface AgentToolPlugin {
  readonly name: string;
  /** Lines of the system prompt about when and how to use the tool ("- For current weather, call …"). */
  readonly promptRules: readonly string[];
  /** How the offline model decides to call the tool and answers from its output; without it, that model never calls it. */
  readonly localRouting?: LocalToolRouting;
  /** One tool, or several (a plug-in that brings another system's tools, such as the MCP servers'). */
  create(): StructuredToolInterface | StructuredToolInterface[];
  /**
   * For a plug-in whose tools change while the service runs (an MCP server
   * that comes up late): a number that changes when they do. The registry
   * calls `create` again, and the next model call is offered the new set.
   */
  toolsVersion?(): number;
}

/** Marks a provider as an agent tool plug-in. */
export const AgentTool = DiscoveryService.createDecorator<void>();

/** The failure a tool reports to the model instead of failing the turn (a place not found, a service down). */
export class ToolReportedError extends Error {
  /** The code the client is told in the call's `end` event (`tool_failed`, `tool_timeout`). */
  readonly code?: string;
}
