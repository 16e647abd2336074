import { DiscoveryService } from '@nestjs/core';
import type { Metrics } from '../../../observability/metrics.js';
import { ATTR_CANDIDATES_OUT, traceFieldAttributes, traceStage } from '../../../observability/spans.js';
import type { RagTraceFields } from '../../../trace/trace.protocol.js';
import type { RetrievalScope } from '../../collections/retrieval-scope.js';
import type { RetrievalHit, StepReporter } from '../retrieval.service.js';

/**
 * The trace fields one stage owns. Stages write them as object literals, so
 * a misspelled or undeclared field is a compile error rather than a field the
 * trace normalizer silently drops.
 */
export type TraceFragment = Partial<RagTraceFields>;

/**
 * What a stage sees: the query, top_k, the collections it may read, the
 * candidates so far and the trace fields the stages before it wrote. Stages
 * return new candidate lists; they never change the ones they were given. A
 * stage that reads chunks reads those of `scope` only.
 */
export interface StageState<C extends RetrievalHit> {
  readonly query: string;
  /** The question as the user asked it: `query` itself, except in a rewrite's search, whose passages are still judged against it. */
  readonly question: string;
  /** Whether recall also searches with the query's words in the other language (SearchOptions.translate). */
  readonly translate: boolean;
  readonly topK: number;
  readonly scope: RetrievalScope;
  readonly candidates: C[];
  readonly trace: Readonly<TraceFragment>;
}

export interface StageContext {
  /** Reports the stage to the client (the stage names and labels clients show). */
  readonly step: StepReporter;
  /** Runs `work` and records its milliseconds as `timings[stage]`. */
  time<T>(stage: string, work: () => Promise<T>): Promise<T>;
}

export interface StageResult<C extends RetrievalHit> {
  /** The candidates after the stage (the same ones when it left them alone). */
  candidates: C[];
  trace: TraceFragment;
  /** The stage's part of the pipeline id (`hybrid-rrf-v1:…+merge+model`), when it names itself there. */
  pipelinePart?: string;
}

/** One step of retrieval. Adding a stage is a class and a line in the pipeline's list. */
export interface RetrievalStage<C extends RetrievalHit> {
  readonly name: string;
  run(state: StageState<C>, context: StageContext): Promise<StageResult<C>>;
}

/**
 * Marks a provider as a retrieval stage plug-in, run right after the named
 * built-in stage (`recall`, `auto_merge`, `rerank` or `threshold`). A team's
 * stage is then a class in a module of its own; the pipeline finds it at
 * start-up, and an unknown `after` stops the start.
 */
export const RetrievalStagePlugin = DiscoveryService.createDecorator<{ after: string }>();

export interface StagesOutcome<C extends RetrievalHit> {
  candidates: C[];
  /** Every stage's fragment, later stages winning, plus `timings`. */
  trace: TraceFragment & { timings: Record<string, number> };
  pipelineId: string;
}

/** A stage's span attributes: the candidates it left and the trace fields it wrote. */
function stageSpanAttributes(result: StageResult<RetrievalHit>) {
  return { [ATTR_CANDIDATES_OUT]: result.candidates.length, ...traceFieldAttributes(result.trace) };
}

/** Runs the stages in order, each on the candidates and trace the ones before it left (each timed in `metrics`, when given). */
export async function runStages<C extends RetrievalHit>(
  stages: readonly RetrievalStage<C>[],
  query: string,
  topK: number,
  scope: RetrievalScope,
  step: StepReporter,
  { question = query, translate = true, metrics }: { question?: string; translate?: boolean; metrics?: Pick<Metrics, 'stage'> } = {},
): Promise<StagesOutcome<C>> {
  const timings: Record<string, number> = {};
  const context: StageContext = {
    step,
    async time(stage, work) {
      const started = performance.now();
      try {
        return await work();
      } finally {
        timings[stage] = Math.round(performance.now() - started);
      }
    },
  };
  let candidates: C[] = [];
  const trace: TraceFragment = {};
  const pipelineParts: string[] = [];
  for (const stage of stages) {
    const given = candidates;
    const run = () => traceStage(stage.name, given.length, () => stage.run({ query, question, translate, topK, scope, candidates: given, trace }, context), stageSpanAttributes);
    const result = await (metrics ? metrics.stage(stage.name, run) : run());
    candidates = result.candidates;
    Object.assign(trace, result.trace);
    if (result.pipelinePart !== undefined) pipelineParts.push(result.pipelinePart);
  }
  return { candidates, trace: { ...trace, timings }, pipelineId: pipelineParts.join('+') };
}
