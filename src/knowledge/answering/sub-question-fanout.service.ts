import { Injectable } from '@nestjs/common';
import { Annotation, END, Send, START, StateGraph } from '@langchain/langgraph';
import type { RagTraceFields } from '../../trace/trace.protocol.js';
import { EvidenceJudge, JudgedGrade } from './evidence-judge.service.js';
import { KnowledgeFlow } from './knowledge-flow.service.js';
import type { RetrievalScope } from '../collections/retrieval-scope.js';
import { RetrievalHit, StepReporter } from '../retrieval/retrieval.service.js';

interface SubResult {
  index: number;
  question: string;
  hits: RetrievalHit[];
  trace: RagTraceFields;
}

const FanOutState = Annotation.Root({
  subQuestions: Annotation<string[]>,
  topK: Annotation<number>,
  results: Annotation<SubResult[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
});

export interface FanOutResult {
  hits: RetrievalHit[];
  grade: JudgedGrade;
  subTraces: RagTraceFields[];
  mergedEvidenceCount: number;
}

/**
 * Retrieves each sub-question of a complex question in parallel: a LangGraph
 * graph fans out one sub-agent per sub-question with `Send`, the results
 * gather through a list reducer, and the evidence is merged without
 * duplicates (best score per chunk), ordered by score.
 */
@Injectable()
export class SubQuestionFanOut {
  constructor(
    private readonly flow: KnowledgeFlow,
    private readonly judge: EvidenceJudge,
  ) {}

  /** Each sub-question is retrieved from the collections of `scope`, as the question would be. */
  async run(question: string, subQuestions: string[], topK: number, scope: RetrievalScope, onStep: StepReporter): Promise<FanOutResult> {
    const graph = new StateGraph(FanOutState)
      .addNode('sub_agent', async (input: { question: string; index: number; topK: number }) => {
        onStep('sub_agent', `Sub-question ${input.index + 1}: ${input.question}`, { index: input.index });
        const result = await this.flow.run(input.question, input.topK, scope, onStep);
        return { results: [{ index: input.index, question: input.question, hits: result.hits, trace: result.trace }] };
      })
      .addConditionalEdges(START, (state: typeof FanOutState.State) => state.subQuestions.map((q, index) => new Send('sub_agent', { question: q, index, topK: state.topK })), [
        'sub_agent',
      ])
      .addEdge('sub_agent', END)
      .compile();
    const state = await graph.invoke({ subQuestions, topK });
    const results = [...state.results].sort((a, b) => a.index - b.index);

    const best = new Map<string, RetrievalHit>();
    let total = 0;
    for (const result of results) {
      for (const hit of result.hits) {
        total += 1;
        const seen = best.get(hit.chunk_id);
        if (!seen || (hit.rerank_score ?? hit.score) > (seen.rerank_score ?? seen.score)) best.set(hit.chunk_id, hit);
      }
    }
    const merged = [...best.values()].sort((a, b) => (b.rerank_score ?? b.score) - (a.rerank_score ?? a.score));
    onStep('merge', `Merged ${total} passages into ${merged.length}`, { merged: merged.length });
    return {
      hits: merged,
      grade: await this.judge.grade(question, merged),
      subTraces: results.map((result) => ({ ...result.trace, query: result.question, tool_used: true })),
      mergedEvidenceCount: merged.length,
    };
  }
}
