import { Inject, Injectable } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, BaseMessage, SystemMessage } from '@langchain/core/messages';
import { BaseCheckpointSaver, END, interrupt, Runtime, START, StateGraph } from '@langchain/langgraph';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { MAIN_MODEL, modelIdentity, SAMPLED_MAIN_MODEL } from '../models/chat-models.js';
import type { ModelSampling, SampledModelFactory } from '../models/chat-models.js';
import { samplingKey } from '../models/sampling.js';
import { ModelCallError, ModelTimeoutError } from '../models/model-errors.js';
import { Metrics } from '../observability/metrics.js';
import { reportedTokens, traceModelCall } from '../observability/spans.js';
import { AgentState, AgentStateValues } from './agent-state.js';
import { AgentToolsNode } from './agent-tools-node.js';
import { CheckpointerProvider } from './checkpointer.provider.js';
import { EphemeralSaver } from './ephemeral-saver.js';
import { buildSystemPrompt } from './system-prompt.js';
import { ToolRegistry } from './tools/tool-registry.service.js';
import { AgentRunContext, AgentRunContextSchema } from './turn-context.js';
import { turnUsage } from './turn-usage.js';

/** The agent's name (gen_ai.agent.name in traces; the graph id of the LangGraph API). */
export const AGENT_NAME = 'agent';

/** Tool rounds allowed in one turn before the graph stops (each round is two super-steps). */
export const MAX_TOOL_ROUNDS = 4;

export function routeAfterModel(state: Pick<AgentStateValues, 'messages'>): 'tools' | typeof END {
  const last = state.messages[state.messages.length - 1];
  return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
}

/** After the tools: back to the model, or to the user first when a search paused for a question. */
export function routeAfterTools(state: Pick<AgentStateValues, 'hitl'>): 'clarify' | 'agent' {
  return state.hitl?.waiting ? 'clarify' : 'agent';
}

/**
 * Human in the loop: the run pauses here (an interrupt, kept by the
 * checkpointer) until a later turn resumes it with the user's answer; the
 * answer joins the paused search's state and the tools run the search's
 * call again.
 */
function askUser(state: AgentStateValues): Partial<AgentStateValues> {
  const hitl = state.hitl!;
  const answer = interrupt(hitl.question);
  return { hitl: { ...hitl, supplements: [...hitl.supplements, String(answer ?? '').trim()], waiting: false } };
}

/** Models bound with a request's sampling, kept for reuse up to this many distinct settings. */
const SAMPLED_MODELS_KEPT = 32;

function bindAgentTools(model: BaseChatModel, tools: ToolRegistry) {
  if (!model.bindTools) throw new Error('the configured chat model cannot call tools');
  return model.bindTools(tools.tools);
}

function buildAgentGraph(model: BaseChatModel, sampledModel: SampledModelFactory, tools: ToolRegistry, checkpointer: BaseCheckpointSaver, llm: AppConfig['llm'], metrics: Metrics) {
  const { timeoutMs } = llm;
  const identity = modelIdentity(llm, 'main');
  // Models bound to the current tool set, bound again when it changes (an MCP server that came up late).
  let boundVersion = tools.version;
  let bound = bindAgentTools(model, tools);
  const sampled = new Map<string, typeof bound>();
  const modelFor = (sampling: ModelSampling | undefined) => {
    if (tools.version !== boundVersion) {
      boundVersion = tools.version;
      bound = bindAgentTools(model, tools);
      sampled.clear();
    }
    if (!sampling) return bound;
    const key = samplingKey(sampling);
    let found = sampled.get(key);
    if (!found) {
      if (sampled.size >= SAMPLED_MODELS_KEPT) sampled.delete(sampled.keys().next().value!);
      found = bindAgentTools(sampledModel(sampling), tools);
      sampled.set(key, found);
    }
    return found;
  };

  const callModel = async (state: AgentStateValues, config: Runtime<AgentRunContext>) => {
    const { turn } = config.context!;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = config.signal ? AbortSignal.any([config.signal, deadline]) : deadline;
    try {
      const chatModel = modelFor(turn.sampling);
      const prompt = [new SystemMessage(buildSystemPrompt(tools.promptRules, turn.summary)), ...state.messages];
      const response = await metrics.modelCall(
        { operation: 'chat', ...identity },
        () =>
          traceModelCall(
            { ...identity, messages: prompt },
            () => chatModel.invoke(prompt, { ...config, signal }),
            (reply) => estimatedTokens(prompt, reply),
          ),
        (reply) => reportedTokens(reply) ?? estimatedTokens(prompt, reply),
      );
      turn.modelCalls.push({ prompt, response });
      return { messages: [response] };
    } catch (error) {
      if (deadline.aborted) throw new ModelTimeoutError(timeoutMs);
      if (config.signal?.aborted) throw error;
      throw new ModelCallError(error);
    }
  };

  return new StateGraph(AgentState, AgentRunContextSchema)
    .addNode('agent', callModel)
    .addNode('tools', new AgentToolsNode(() => tools.tools))
    .addNode('clarify', askUser)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', routeAfterModel, ['tools', END])
    .addConditionalEdges('tools', routeAfterTools, ['clarify', 'agent'])
    .addEdge('clarify', 'tools')
    .compile({ checkpointer });
}

export type AgentGraph = ReturnType<typeof buildAgentGraph>;

/** A call's tokens for its span when the model did not report them (the offline model): the turn usage's estimate. */
async function estimatedTokens(prompt: BaseMessage[], response: BaseMessage): Promise<{ input: number; output: number }> {
  const usage = await turnUsage([{ prompt, response }]);
  return { input: usage.prompt_tokens, output: usage.completion_tokens };
}

/**
 * The agent's graph around the shared model and every registered tool,
 * compiled once (on first use, after the tools are discovered); the model
 * is bound to the tools again when the tool set changes. Each run
 * is given its turn as the run's `context` (a TurnContext).
 */
@Injectable()
export class AgentFactory {
  private compiled?: AgentGraph;
  private compiledStateless?: AgentGraph;
  /** The checkpoints of stateless turns: in memory, dropped when the turn ends. */
  readonly ephemeralSaver = new EphemeralSaver();

  constructor(
    @Inject(MAIN_MODEL) private readonly model: BaseChatModel,
    @Inject(SAMPLED_MAIN_MODEL) private readonly sampledModel: SampledModelFactory,
    private readonly tools: ToolRegistry,
    private readonly checkpointer: CheckpointerProvider,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  get graph(): AgentGraph {
    this.compiled ??= buildAgentGraph(this.model, this.sampledModel, this.tools, this.checkpointer.saver, this.config.llm, this.metrics);
    return this.compiled;
  }

  /** The same graph for turns that store nothing (the OpenAI-compatible route without a session): checkpoints in `ephemeralSaver`. */
  get statelessGraph(): AgentGraph {
    this.compiledStateless ??= buildAgentGraph(this.model, this.sampledModel, this.tools, this.ephemeralSaver, this.config.llm, this.metrics);
    return this.compiledStateless;
  }
}
