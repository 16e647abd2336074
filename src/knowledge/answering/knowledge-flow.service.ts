import { Injectable } from '@nestjs/common';
import type { Attributes } from '@opentelemetry/api';
import { Metrics } from '../../observability/metrics.js';
import { traceFieldAttributes, traceRetrieval, traceStage } from '../../observability/spans.js';
import type { RagTraceFields } from '../../trace/trace.protocol.js';
import { DocumentTitles } from './document-titles.service.js';
import { EvidenceJudge, JudgedGrade } from './evidence-judge.service.js';
import { Grade } from '../retrieval/grading.js';
import { RewriteJudge } from './judges/rewrite-judge.service.js';
import type { RetrievalScope } from '../collections/retrieval-scope.js';
import { RetrievalHit, RetrievalService, StepReporter } from '../retrieval/retrieval.service.js';
import { GradingStage, gradeTrace } from '../retrieval/stages/grading.stage.js';
import { StageContext } from '../retrieval/stages/retrieval-stage.js';
import { RewriteStage } from '../retrieval/stages/rewrite.stage.js';

export interface KnowledgeFlowResult {
  hits: RetrievalHit[];
  grade: JudgedGrade;
  /** Trace fields of every stage that ran. */
  trace: RagTraceFields;
}

/**
 * What the knowledge tool does with a question: retrieve, grade the
 * evidence, and when it is weak rewrite the query once and retrieve again
 * (offline also with the question in the other language), keeping the
 * better evidence. The first recall and the better-graded second one stay in
 * the trace.
 */
@Injectable()
export class KnowledgeFlow {
  private readonly grading: GradingStage;
  private readonly rewriting: RewriteStage;

  constructor(
    private readonly retrieval: RetrievalService,
    judge: EvidenceJudge,
    rewriter: RewriteJudge,
    private readonly titles: DocumentTitles,
    private readonly metrics: Metrics,
  ) {
    this.grading = new GradingStage(judge);
    this.rewriting = new RewriteStage(rewriter, retrieval);
  }

  /** Answers `query` from the collections of `scope`: the first retrieval and the rewrite's both read those only. */
  run(query: string, topK: number, scope: RetrievalScope, onStep: StepReporter = () => undefined): Promise<KnowledgeFlowResult> {
    return traceRetrieval({ collectionIds: scope.collectionIds, query, topK }, () => this.retrieve(query, topK, scope, onStep), retrievalFindings);
  }

  /** A stage of the flow: its span, and its duration in the metrics. */
  private stage<T>(name: string, candidatesIn: number, work: () => Promise<T>, describe: (result: T) => Attributes): Promise<T> {
    return this.metrics.stage(name, () => traceStage(name, candidatesIn, work, describe));
  }

  private async retrieve(query: string, topK: number, scope: RetrievalScope, onStep: StepReporter): Promise<KnowledgeFlowResult> {
    // Grading and rewrite are not timed: `timings` holds the retrieval stages (the rewrite's recall as rewrite_*).
    const context: StageContext = { step: onStep, time: (_stage, work) => work() };
    const first = await this.retrieval.search(query, topK, { scope, onStep });
    let trace: RagTraceFields = {
      ...first.trace,
      retrieval_mode: first.mode,
      pipeline_id: first.pipelineId,
      retrieval_stage: 'initial',
      rewrite_mode: null,
    };
    const graded = await this.stage(
      'grade',
      first.hits.length,
      () => this.grading.run({ query, question: query, translate: true, topK, scope, candidates: first.hits, trace }, context),
      gradeAttributes,
    );
    let hits = first.hits;
    let grade = graded.grade;

    if (grade.grade_route === 'answer' && grade.evidence_relevance === 'weak') {
      const rewritten = await this.stage(
        'rewrite',
        hits.length,
        () => this.rewriting.run({ query, question: query, translate: true, topK, scope, candidates: hits, trace }, context),
        stageAttributes,
      );
      // The rewrite's evidence, and that of the question in the other language when it was searched: the better graded one.
      // Only evidence that holds passages is graded (one grade when just one search found any: a model's grade costs a call).
      const found = [{ candidates: rewritten.candidates, trace: rewritten.trace }, ...(rewritten.across ? [rewritten.across] : [])];
      const tries = found.some((attempt) => attempt.candidates.length > 0) ? found.filter((attempt) => attempt.candidates.length > 0) : found.slice(0, 1);
      const graded = await Promise.all(
        tries.map(async (attempt) => ({
          ...attempt,
          grade: await this.stage(
            'grade',
            attempt.candidates.length,
            () => this.grading.grade(query, attempt.candidates),
            (grade) => traceFieldAttributes(gradeTrace(grade)),
          ),
        })),
      );
      const second = graded.reduce((best, attempt) => (rank(attempt.grade) > rank(best.grade) ? attempt : best));
      // Passages beat none, however confidently "nothing was retrieved" was graded.
      const better = second.candidates.length > 0 && (hits.length === 0 || rank(second.grade) > rank(grade));
      trace = {
        ...trace,
        ...second.trace,
        retrieval_stage: better ? 'rewrite' : 'initial',
        timings: { ...trace.timings, ...second.trace.timings },
      };
      if (better) {
        hits = second.candidates;
        grade = second.grade;
        onStep('grade', `Evidence after rewrite ${grade.evidence_status}`, { route: grade.grade_route });
      }
    }

    // The user chooses between documents by their titles; the grading told them apart by their file names.
    grade = await this.titles.label(grade, hits);
    return {
      hits,
      grade,
      trace: {
        ...trace,
        ...gradeTrace(grade),
        final_chunks: hits,
        final_empty: hits.length === 0,
        ...(grade.grade_route === 'clarify'
          ? {
              clarification_options: grade.options,
              clarification_option_sources: grade.option_sources,
              missing_conditions: grade.evidence_ambiguity === 'needs_choice' ? ['which of: ' + grade.options.join(' / ')] : [],
            }
          : {}),
      },
    };
  }
}

/** A stage's span attributes: the candidates it left and its trace fields. */
function stageAttributes(result: { candidates: unknown[]; trace: Record<string, unknown> }) {
  return { 'rag.stage.candidates_out': result.candidates.length, ...traceFieldAttributes(result.trace) };
}

function gradeAttributes(result: { candidates: unknown[]; grade: JudgedGrade }) {
  return { 'rag.stage.candidates_out': result.candidates.length, ...traceFieldAttributes(gradeTrace(result.grade)) };
}

/** The retrieval span's findings: the passages answered from, the verdict and which retrieval they came from. */
function retrievalFindings(result: KnowledgeFlowResult) {
  const { trace } = result;
  return {
    documents: result.hits,
    attributes: traceFieldAttributes({
      retrieval_stage: trace.retrieval_stage,
      pipeline_id: trace.pipeline_id,
      grade_route: trace.grade_route,
      evidence_status: trace.evidence_status,
      rewrite_mode: trace.rewrite_mode,
      final_empty: trace.final_empty,
    }),
  };
}

const ANSWERABILITY = { none: 0, partial: 1, sufficient: 2 } as const;
function rank(grade: Grade): number {
  return ANSWERABILITY[grade.evidence_answerability] * 10 + (grade.evidence_relevance === 'strong' ? 5 : 0) + grade.grade_confidence;
}
