import { EvidenceJudge, JudgedGrade } from '../../answering/evidence-judge.service.js';
import type { RetrievalHit } from '../retrieval.service.js';
import { RetrievalStage, StageContext, StageResult, StageState, TraceFragment } from './retrieval-stage.js';

export interface GradingResult extends StageResult<RetrievalHit> {
  grade: JudgedGrade;
}

/** The grade's trace fields (all but `options`, which the trace keeps only when the user must choose). */
export function gradeTrace(grade: JudgedGrade): TraceFragment {
  return {
    grade_route: grade.grade_route,
    evidence_status: grade.evidence_status,
    evidence_relevance: grade.evidence_relevance,
    evidence_answerability: grade.evidence_answerability,
    evidence_ambiguity: grade.evidence_ambiguity,
    grade_confidence: grade.grade_confidence,
    grade_reason: grade.grade_reason,
    grade_judge: grade.grade_judge,
    grade_fallback_reason: grade.grade_fallback_reason,
  };
}

/** Grades the evidence for the query (EvidenceJudge: the fast model, or the local judge) and reports the verdict. */
export class GradingStage implements RetrievalStage<RetrievalHit> {
  readonly name = 'grade';

  constructor(private readonly judge: EvidenceJudge) {}

  async run({ query, candidates }: StageState<RetrievalHit>, { step }: StageContext): Promise<GradingResult> {
    const grade = await this.grade(query, candidates);
    step('grade', `Evidence ${grade.evidence_status}`, { route: grade.grade_route, confidence: grade.grade_confidence });
    return { candidates, grade, trace: gradeTrace(grade) };
  }

  /** The verdict without a step, for evidence that is only kept when it is better. */
  grade(query: string, hits: RetrievalHit[]): Promise<JudgedGrade> {
    return this.judge.grade(query, hits);
  }
}
