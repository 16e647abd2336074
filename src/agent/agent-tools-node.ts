import { ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import { Command, isGraphBubbleUp, LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { CodedError } from '../common/coded-error.js';
import { isDatabaseUnavailable } from '../common/database-unavailable.js';

/**
 * LangGraph's ToolNode, except that a failure of the service itself (a coded
 * error, the database down) fails the turn with its code instead of being
 * handed to the model as the tool's answer. Any other tool failure (bad
 * arguments from the model, a tool's own error) is reported to the model,
 * as ToolNode does, so it can correct itself.
 */
export class AgentToolsNode extends ToolNode {
  constructor(tools: ConstructorParameters<typeof ToolNode>[0]) {
    super(tools, { handleToolErrors: false });
  }

  protected override async runTool(call: ToolCall, config: LangGraphRunnableConfig, state: unknown): Promise<ToolMessage | Command> {
    try {
      return await super.runTool(call, config, state);
    } catch (error) {
      if (isGraphBubbleUp(error) || error instanceof CodedError || isDatabaseUnavailable(error)) throw error;
      return new ToolMessage({
        status: 'error',
        content: `Error: ${(error as Error)?.message ?? String(error)}\n Please fix your mistakes.`,
        name: call.name,
        tool_call_id: call.id ?? '',
      });
    }
  }
}
