import { Inject, Injectable } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, SystemMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { ChatRequestContext } from '../chat/chat-request-context.js';
import { CheckpointerProvider } from './checkpointer.provider.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { MAIN_MODEL } from '../models/chat-models.js';
import { ModelTimeoutError } from '../models/model-errors.js';
import { buildSystemPrompt } from './system-prompt.js';
import { ToolRegistry } from './tools/tool-registry.service.js';

/** Tool rounds allowed in one turn before the graph stops (each round is two super-steps). */
export const MAX_TOOL_ROUNDS = 4;

export function routeAfterModel(state: typeof MessagesAnnotation.State): 'tools' | typeof END {
  const last = state.messages[state.messages.length - 1];
  return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
}

/** F25: assembles the turn's agent around the shared model. */
@Injectable()
export class AgentFactory {
  constructor(
    @Inject(MAIN_MODEL) private readonly model: BaseChatModel,
    private readonly tools: ToolRegistry,
    private readonly checkpointer: CheckpointerProvider,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  createAgentForRequest(context: ChatRequestContext, options: { summary?: string } = {}) {
    const tools = this.tools.createTools(context);
    const systemPrompt = buildSystemPrompt(
      tools.map((t) => t.name),
      options.summary,
    );
    if (!this.model.bindTools) throw new Error('the configured chat model cannot call tools');
    const model = this.model.bindTools(tools);

    const timeoutMs = this.config.llm.timeoutMs;
    const callModel = async (state: typeof MessagesAnnotation.State, config: { signal?: AbortSignal }) => {
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = config.signal ? AbortSignal.any([config.signal, deadline]) : deadline;
      try {
        const response = await model.invoke([new SystemMessage(systemPrompt), ...state.messages], { ...config, signal });
        return { messages: [response] };
      } catch (error) {
        if (deadline.aborted) throw new ModelTimeoutError(timeoutMs);
        throw error;
      }
    };

    return new StateGraph(MessagesAnnotation)
      .addNode('agent', callModel)
      .addNode('tools', new ToolNode(tools, { handleToolErrors: true }))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: this.checkpointer.saver });
  }
}
