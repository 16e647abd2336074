import { Inject, Injectable } from '@nestjs/common';
import { tool, ToolRuntime } from '@langchain/core/tools';
import { z } from 'zod';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import {
  boundQuery,
  chosenOption,
  setAsideSources,
  clarificationPrompt,
  ComplexityJudge,
  KnowledgeFlow,
  KnowledgeFlowResult,
  MAX_QUERY_LENGTH,
  SubQuestionFanOut,
} from '../../../knowledge/public-api.js';
import { composeFromPassages } from '../../../models/local-compose.js';
import type { LocalToolRouting } from '../../../models/local-tool-routing.js';
import type { AgentStateValues, AgentToolArtifact, HitlQuestion } from '../../agent-state.js';
import type { AgentRunContext } from '../../turn-context.js';
import { AgentTool, AgentToolPlugin } from '../agent-tool.js';
import { KNOWLEDGE_BUDGET_SPENT, KNOWLEDGE_TOOL_BUDGET, KNOWLEDGE_TOOL_NAME, KnowledgeToolOutput, MAX_HITL_ROUNDS } from './knowledge-tool.constants.js';

export { KNOWLEDGE_BUDGET_SPENT, KNOWLEDGE_TOOL_NAME, MAX_HITL_ROUNDS } from './knowledge-tool.constants.js';
export type { KnowledgeToolOutput } from './knowledge-tool.constants.js';

/** The offline model's answer from the tool's output: the passages' best sentences, cited. */
function composeKnowledgeAnswer(question: string, output: string): string {
  if (output === KNOWLEDGE_BUDGET_SPENT) return output;
  try {
    const parsed = JSON.parse(output) as KnowledgeToolOutput;
    // The tool's query includes the user's clarifications, when there were any.
    return composeFromPassages(parsed.query || question, parsed.chunks ?? []);
  } catch {
    return output;
  }
}

@AgentTool()
@Injectable()
export class KnowledgeSearchTool implements AgentToolPlugin {
  readonly name = KNOWLEDGE_TOOL_NAME;
  readonly promptRules = [
    `- For questions about products, manuals, policies or anything the company documents, call ${KNOWLEDGE_TOOL_NAME} once with the full question, then answer only from the passages it returns, citing each fact as [source]. If the passages do not answer the question, say so; do not invent facts.`,
    `- ${KNOWLEDGE_TOOL_NAME} may run at most once per turn; if it reports that the budget is spent, answer from what you already have.`,
  ];
  /** The catch-all of the offline model: any message no other tool claims is searched. */
  readonly localRouting: LocalToolRouting = {
    priority: 0,
    capability: { en: 'look things up in the knowledge base (manuals, policies)', zh: '在知识库（产品手册、政策等）中查找答案' },
    route: (message) => ({ call: { query: message } }),
    compose: composeKnowledgeAnswer,
  };

  constructor(
    private readonly flow: KnowledgeFlow,
    private readonly fanOut: SubQuestionFanOut,
    private readonly complexityJudge: ComplexityJudge,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  create() {
    return tool(
      async ({ query }: { query: string }, runtime: ToolRuntime<AgentStateValues, AgentRunContext>): Promise<[string, AgentToolArtifact]> => {
        const { turn } = runtime.context;
        if (!turn.acquireToolCall(KNOWLEDGE_TOOL_NAME, KNOWLEDGE_TOOL_BUDGET)) return [KNOWLEDGE_BUDGET_SPENT, {}];
        const topK = this.config.knowledge.topK;
        const started = performance.now();
        const step = turn.stepReporter(runtime.writer);
        // A search this run paused to ask the user, and the user's answers since (graph state, kept by the checkpointer).
        const resuming = runtime.state?.hitl ?? null;
        // A question too long to search whole (a long message passed on as it is) is searched by its start;
        // the trace says so. A resumed run's original question was shortened when the run paused.
        const bounded = boundQuery(resuming?.question.original_question ?? query);
        const original = bounded.query;
        const queryTrace = { query_truncated: bounded.truncated, query_original_length: bounded.originalLength };
        if (bounded.truncated) {
          step('query_truncated', `Searching the first ${original.length} of ${bounded.originalLength} characters`, {
            original_length: bounded.originalLength,
            length: original.length,
          });
        }
        // A resumed run reuses the paused run's verdict instead of judging complexity again.
        const complexity = resuming?.resumeState?.complexity
          ? {
              complexity: resuming.resumeState.complexity,
              complexity_reason: resuming.resumeState.complexity_reason ?? 'kept from the paused run',
              sub_questions: resuming.resumeState.sub_questions ?? [],
            }
          : await this.complexityJudge.judge(original);
        step('complexity', complexity.complexity === 'complex' ? `Splitting into ${complexity.sub_questions.length} sub-questions` : 'One question', {
          complexity: complexity.complexity,
        });
        if (complexity.complexity === 'complex' && complexity.sub_questions.length > 1) {
          const fanOut = await this.fanOut.run(original, complexity.sub_questions, topK, turn.scope, step);
          const { options: _options, ...gradeFields } = fanOut.grade;
          const answerHits = fanOut.hits.slice(0, topK * 2);
          const fanOutTrace = {
            tool_used: true,
            tool_name: KNOWLEDGE_TOOL_NAME,
            query: original,
            ...queryTrace,
            retrieval_stage: 'subquestion_merge',
            ...complexity,
            sub_agent_count: complexity.sub_questions.length,
            merged_evidence_count: fanOut.mergedEvidenceCount,
            top_k: topK,
            ...gradeFields,
            grade_route: 'answer',
            final_chunks: answerHits,
            final_empty: answerHits.length === 0,
            sub_traces: fanOut.subTraces,
            timings: { total: Math.round(performance.now() - started) },
          };
          const output: KnowledgeToolOutput = {
            query: original,
            chunks: answerHits.map(({ source, page, text, score }) => ({ source, page, text, score })),
          };
          return [JSON.stringify(output), { trace: fanOutTrace }];
        }
        // The user's answers to this search's questions, the last one this turn's message.
        // The latest answer may pick an option by its title, number or file name: it is searched as the option's title and file words.
        const supplements = resuming?.supplements ?? [];
        const searched = supplements.map((supplement, i) => (i === supplements.length - 1 && resuming ? chosenOption(supplement, resuming.question) : supplement));
        let result: KnowledgeFlowResult;
        let trace: Record<string, unknown>;
        if (resuming && supplements.length > 0) {
          step('hitl', 'Retrieving again with your answer', { round: supplements.length });
          result = await this.flow.run(`${original} ${searched.join(' ')}`, topK, turn.scope, step);
          // The documents the user's choice set aside are not answered from.
          const setAside = new Set(setAsideSources(supplements.at(-1)!, resuming.question));
          const kept = result.hits.filter((hit) => !setAside.has(hit.source));
          if (kept.length > 0 && kept.length < result.hits.length) result = { ...result, hits: kept };
          trace = this.hitlTrace(result, complexity, supplements, {
            query: original,
            retrieval_status: resuming.question.retrieval_status,
            clarification_prompt: resuming.question.clarification_prompt,
          });
        } else {
          result = await this.flow.run(original, topK, turn.scope, step);
          trace = { ...result.trace, ...complexity };
        }
        // Human in the loop: the run pauses to ask the user (the graph's clarify node), at most MAX_HITL_ROUNDS times;
        // the answer comes back in the state's supplements and this call runs again.
        if (result.grade.grade_route === 'clarify' && supplements.length < MAX_HITL_ROUNDS) {
          const prompt = clarificationPrompt(original, result.grade);
          const hitlType = result.grade.evidence_ambiguity === 'needs_choice' ? 'choose' : 'clarify';
          const retrievalStatus = hitlType === 'choose' ? 'needs_choice' : 'needs_clarification';
          const question: HitlQuestion = {
            original_question: original,
            clarification_prompt: prompt,
            options: result.grade.options,
            option_sources: result.grade.option_sources,
            hitl_type: hitlType,
            retrieval_status: retrievalStatus,
          };
          const pause = {
            question,
            resumeState: {
              original_question: original,
              hitl_route: hitlType,
              retrieval_status: retrievalStatus,
              rewrite_count: trace.rewrite_mode ? 1 : 0,
              complexity: complexity.complexity,
              complexity_reason: complexity.complexity_reason,
              sub_questions: complexity.sub_questions,
            },
          };
          const pausedTrace = { ...trace, tool_used: true, tool_name: KNOWLEDGE_TOOL_NAME, query: original, ...queryTrace, clarification_prompt: prompt };
          return [prompt, { trace: pausedTrace, pause }];
        }
        const totalMs = Math.round(performance.now() - started);
        const finalTrace = {
          ...trace,
          tool_used: true,
          tool_name: KNOWLEDGE_TOOL_NAME,
          query: original,
          ...queryTrace,
          top_k: topK,
          timings: { ...((trace.timings as object) ?? {}), total: totalMs },
        };
        const output: KnowledgeToolOutput = {
          query: searched.length ? `${original} ${searched.join(' ')}` : original,
          chunks: result.hits.map(({ source, page, text, score }) => ({ source, page, text, score })),
        };
        return [JSON.stringify(output), { trace: finalTrace }];
      },
      {
        responseFormat: 'content_and_artifact',
        name: KNOWLEDGE_TOOL_NAME,
        description:
          'Search the knowledge base (product manuals, policies) for passages that answer the question. ' + 'Call at most once per turn, with the full question as the query.',
        // No upper bound: a long question (a whole long message) is searched by its start, not refused.
        schema: z.object({
          query: z.string().min(1).describe(`The question to search for (beyond ${MAX_QUERY_LENGTH} characters only its start is searched)`),
        }),
      },
    );
  }

  private hitlTrace(
    result: KnowledgeFlowResult,
    complexity: object,
    supplements: string[],
    before: { query: string; retrieval_status?: string; clarification_prompt?: string },
  ): Record<string, unknown> {
    return {
      ...result.trace,
      ...complexity,
      retrieval_stage: 'hitl',
      hitl_resumed: true,
      user_supplement: supplements.join(' / '),
      hitl_resume_strategy: 'append_supplement_to_original_question',
      pre_resume_snapshot: {
        query: before.query,
        grade_route: 'clarify',
        evidence_status: before.retrieval_status,
        clarification_prompt: before.clarification_prompt,
      },
      hitl_chunks: result.hits,
      clarification_prompt: before.clarification_prompt,
    };
  }
}
