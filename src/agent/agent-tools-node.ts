import { Logger } from '@nestjs/common';
import { ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import { ToolInputParsingException } from '@langchain/core/tools';
import { BaseMessage } from '@langchain/core/messages';
import { Command, isGraphBubbleUp, LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { CodedError } from '../common/coded-error.js';
import { isDatabaseUnavailable } from '../common/database-unavailable.js';
import { traceToolCall } from '../observability/spans.js';
import { normalizeAndValidateRagTrace, normalizeHitlResumeState } from '../trace/trace.normalizer.js';
import type { AgentStateValues, AgentToolArtifact } from './agent-state.js';
import { ToolReportedError } from './tools/agent-tool.js';

/**
 * LangGraph's ToolNode, with the failures of a tool sorted out:
 * - a failure of the service itself (a coded error, the database down)
 *   fails the turn with its code;
 * - arguments the model got wrong, and a tool's own ToolReportedError, go
 *   back to the model as the tool's answer, so it can correct itself or
 *   explain;
 * - anything else (a bug, a library's or driver's error) is logged, and the
 *   model only learns that the tool failed: its text is internal.
 * Failed calls are ToolMessages with `status: 'error'`.
 *
 * A tool's artifact (AgentToolArtifact) goes into the graph state: its
 * trace into `ragTrace`; a question for the user into `hitl`, without the
 * call's message, so the call runs again once the user answered.
 */
export class AgentToolsNode extends ToolNode {
  private readonly logger = new Logger('AgentTools');

  /** `currentTools` is read at each run: the tool set may grow while the service runs (an MCP server that came up late). */
  constructor(private readonly currentTools: () => ConstructorParameters<typeof ToolNode>[0]) {
    super(currentTools(), { handleToolErrors: false });
  }

  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<Partial<AgentStateValues>> {
    this.tools = this.currentTools();
    const output = (await super.run(input, config)) as { messages: BaseMessage[] };
    const state = input as AgentStateValues;
    const update: Partial<AgentStateValues> = { messages: [] };
    for (const message of output.messages) {
      const artifact = message instanceof ToolMessage ? (message.artifact as AgentToolArtifact | undefined) : undefined;
      if (!artifact) {
        update.messages!.push(message);
        continue;
      }
      if (artifact.trace) update.ragTrace = normalizeAndValidateRagTrace(artifact.trace);
      if (artifact.pause) {
        const resumeState = normalizeHitlResumeState(artifact.pause.resumeState);
        update.hitl = { question: artifact.pause.question, resumeState, supplements: state.hitl?.supplements ?? [], waiting: true };
      } else {
        // The model's message without the artifact: the trace is state of its own, not part of the conversation.
        const { content, name, tool_call_id, status, id } = message as ToolMessage;
        update.messages!.push(new ToolMessage({ content, name, tool_call_id, status, id }));
      }
    }
    return update;
  }

  protected override runTool(call: ToolCall, config: LangGraphRunnableConfig, state: unknown): Promise<ToolMessage | Command> {
    return traceToolCall({ name: call.name, callId: call.id, args: call.args }, () => this.runToolSorted(call, config, state));
  }

  private async runToolSorted(call: ToolCall, config: LangGraphRunnableConfig, state: unknown): Promise<ToolMessage | Command> {
    if (!this.tools.some((tool) => 'name' in tool && tool.name === call.name)) {
      // The model named a tool it was not given, or one that went away since it was bound (an MCP server that changed its tools).
      return new ToolMessage({
        status: 'error',
        content: `Error: the tool ${call.name.slice(0, 100)} is not available (any more); answer without it.`,
        name: call.name,
        tool_call_id: call.id ?? '',
        additional_kwargs: { error_code: 'tool_failed' },
      });
    }
    try {
      return await super.runTool(call, config, state);
    } catch (error) {
      // A cancelled run stops here too: its tools' aborts are not failures to report to the model.
      if (config.signal?.aborted || isGraphBubbleUp(error) || error instanceof CodedError || isDatabaseUnavailable(error)) throw error;
      let content: string;
      let code: string | undefined;
      if (error instanceof ToolReportedError) code = error.code;
      if (error instanceof ToolInputParsingException || error instanceof ToolReportedError) {
        content = `Error: ${error.message}\n Please fix your mistakes.`;
      } else {
        this.logger.error({ err: error, tool: call.name }, `tool ${call.name} failed`);
        content = `Error: the ${call.name} tool failed on an internal error; do not retry it in this turn.`;
      }
      return new ToolMessage({ status: 'error', content, name: call.name, tool_call_id: call.id ?? '', additional_kwargs: code ? { error_code: code } : {} });
    }
  }
}
