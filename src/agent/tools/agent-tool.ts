import { DiscoveryService } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { ChatRequestContext } from '../../chat/chat-request-context.js';

/**
 * A tool the agent may call. One provider per tool, each in its own module,
 * marked with @AgentTool(): the registry discovers them, so adding a tool
 * means adding a module and nothing else. `create` runs once per turn and
 * may bind the turn's context.
 */
export interface AgentToolFactory {
  readonly name: string;
  create(context: ChatRequestContext): StructuredToolInterface;
}

/** Marks a provider as an agent tool factory. */
export const AgentTool = DiscoveryService.createDecorator<void>();
