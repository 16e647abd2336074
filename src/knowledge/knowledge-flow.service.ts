import { Injectable } from '@nestjs/common';
import { EvidenceJudge } from './evidence-judge.service.js';
import { Grade } from './grading.js';
import { RetrievalHit, RetrievalService, StepReporter } from './retrieval.service.js';
import { rewriteQuery } from './rewrite.js';

export interface KnowledgeFlowResult {
  hits: RetrievalHit[];
  grade: Grade;
  /** Trace fields of every stage that ran. */
  trace: Record<string, unknown>;
}

/**
 * What the knowledge tool does with a question: retrieve, grade the
 * evidence, and when it is weak rewrite the query once and retrieve again,
 * keeping the better evidence. Both recalls stay in the trace.
 */
@Injectable()
export class KnowledgeFlow {
  constructor(
    private readonly retrieval: RetrievalService,
    private readonly judge: EvidenceJudge,
  ) {}

  async run(query: string, topK: number, onStep: StepReporter = () => undefined): Promise<KnowledgeFlowResult> {
    const first = await this.retrieval.search(query, topK, { onStep });
    let grade = await this.judge.grade(query, first.hits);
    onStep('grade', `Evidence ${grade.evidence_status}`, { route: grade.grade_route, confidence: grade.grade_confidence });
    let hits = first.hits;
    let trace: Record<string, unknown> = {
      ...first.trace,
      retrieval_mode: first.mode,
      pipeline_id: first.pipelineId,
      retrieval_stage: 'initial',
      rewrite_mode: null,
    };

    if (grade.grade_route === 'answer' && grade.evidence_relevance === 'weak') {
      const rewrite = rewriteQuery(query);
      onStep('rewrite', rewrite.rewrite_mode === 'step_back' ? 'Asking a step-back question' : 'Searching with a hypothetical answer', {
        mode: rewrite.rewrite_mode,
      });
      const second = await this.retrieval.search(rewrite.rewritten_query, topK, { onStep });
      const secondGrade = await this.judge.grade(query, second.hits);
      const better = rank(secondGrade) > rank(grade);
      trace = {
        ...trace,
        ...rewrite,
        rewrite_chunks: second.hits,
        retrieval_stage: better ? 'rewrite' : 'initial',
        timings: { ...(trace.timings as object), ...prefixed('rewrite_', second.trace?.timings as Record<string, number>) },
      };
      if (better) {
        hits = second.hits;
        grade = secondGrade;
        onStep('grade', `Evidence after rewrite ${grade.evidence_status}`, { route: grade.grade_route });
      }
    }

    const { options: _options, ...gradeFields } = grade;
    return {
      hits,
      grade,
      trace: {
        ...trace,
        ...gradeFields,
        final_chunks: hits,
        final_empty: hits.length === 0,
        ...(grade.grade_route === 'clarify'
          ? {
              clarification_options: grade.options,
              missing_conditions: grade.evidence_ambiguity === 'needs_choice' ? ['which of: ' + grade.options.join(' / ')] : [],
            }
          : {}),
      },
    };
  }
}

const ANSWERABILITY = { none: 0, partial: 1, sufficient: 2 } as const;
function rank(grade: Grade): number {
  return ANSWERABILITY[grade.evidence_answerability] * 10 + (grade.evidence_relevance === 'strong' ? 5 : 0) + grade.grade_confidence;
}

function prefixed(prefix: string, timings: Record<string, number> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(timings ?? {}).map(([k, v]) => [`${prefix}${k}`, v]));
}
