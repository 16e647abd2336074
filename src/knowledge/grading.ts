import { tokenize } from '../common/text.js';
import type { RetrievalHit } from './retrieval.service.js';

export interface Grade {
  grade_route: 'answer' | 'clarify';
  evidence_status: 'sufficient' | 'partial' | 'needs_clarification' | 'needs_choice';
  evidence_relevance: 'strong' | 'weak';
  evidence_answerability: 'sufficient' | 'partial' | 'none';
  evidence_ambiguity: 'missing_condition' | 'needs_choice' | null;
  grade_confidence: number;
  grade_reason: string;
  /** With needs_choice: what the user should choose between (document titles). */
  options: string[];
}

const STRONG_SCORE = 0.5;
const SUFFICIENT_COVERAGE = 0.6;
const PARTIAL_COVERAGE = 0.3;
const CLOSE_RATIO = 0.8;

function titleOf(source: string): string {
  return source.replace(/\.(md|txt|pdf)$/i, '').replace(/[-_]+/g, ' ');
}

/**
 * The local judge: grades evidence by what it can measure. Coverage is the
 * share of the question's terms found in the passages; relevance comes from
 * the rerank scores (or coverage when there are none). Evidence that splits
 * between documents scoring alike, each named by words the question does not
 * contain (say "X1" and "X2"), is ambiguous: the user must choose.
 */
export function gradeEvidence(query: string, hits: RetrievalHit[]): Grade {
  const terms = new Set(tokenize(query));
  if (hits.length === 0 || terms.size === 0) {
    return {
      grade_route: 'answer',
      evidence_status: 'partial',
      evidence_relevance: 'weak',
      evidence_answerability: 'none',
      evidence_ambiguity: null,
      grade_confidence: 0.9,
      grade_reason: hits.length === 0 ? 'Nothing was retrieved.' : 'The question has no searchable terms.',
      options: [],
    };
  }
  const evidenceWords = new Set(hits.flatMap((hit) => tokenize(hit.text)));
  let covered = 0;
  for (const term of terms) if (evidenceWords.has(term)) covered += 1;
  const coverage = covered / terms.size;
  const top = hits[0].rerank_score ?? coverage;
  const relevance: Grade['evidence_relevance'] = top >= STRONG_SCORE || coverage >= SUFFICIENT_COVERAGE ? 'strong' : 'weak';
  const answerability: Grade['evidence_answerability'] =
    coverage >= SUFFICIENT_COVERAGE && relevance === 'strong' ? 'sufficient' : coverage >= PARTIAL_COVERAGE ? 'partial' : 'none';

  // Competing documents: the best hit of each of the two best documents score alike.
  const bestPerSource = new Map<string, RetrievalHit>();
  for (const hit of hits) if (!bestPerSource.has(hit.source)) bestPerSource.set(hit.source, hit);
  const [first, second] = [...bestPerSource.values()];
  if (first && second) {
    const score = (hit: RetrievalHit) => hit.rerank_score ?? hit.score;
    const close = score(second) >= CLOSE_RATIO * score(first);
    const distinguishing = (hit: RetrievalHit, other: RetrievalHit) => {
      const own = new Set(tokenize(titleOf(hit.source)));
      for (const word of tokenize(titleOf(other.source))) own.delete(word);
      return [...own];
    };
    const firstOwn = distinguishing(first, second);
    const secondOwn = distinguishing(second, first);
    // The question already names one of them: nothing to choose.
    const alreadyChosen = [...firstOwn, ...secondOwn].some((word) => terms.has(word));
    const sharedTitleWords = tokenize(titleOf(first.source)).filter((w) => tokenize(titleOf(second.source)).includes(w) && terms.has(w));
    if (close && !alreadyChosen && firstOwn.length > 0 && secondOwn.length > 0 && sharedTitleWords.length > 0) {
      return {
        grade_route: 'clarify',
        evidence_status: 'needs_choice',
        evidence_relevance: relevance,
        evidence_answerability: answerability === 'sufficient' ? 'partial' : answerability,
        evidence_ambiguity: 'needs_choice',
        grade_confidence: Number((0.5 + 0.5 * (1 - Math.abs(score(first) - score(second)) / Math.max(score(first), 1e-9))).toFixed(2)),
        grade_reason: `The evidence splits between ${titleOf(first.source)} and ${titleOf(second.source)}, which the question does not tell apart.`,
        options: [titleOf(first.source), titleOf(second.source)],
      };
    }
  }
  const status: Grade['evidence_status'] = answerability === 'sufficient' ? 'sufficient' : 'partial';
  return {
    grade_route: 'answer',
    evidence_status: status,
    evidence_relevance: relevance,
    evidence_answerability: answerability,
    evidence_ambiguity: null,
    grade_confidence: Number(Math.min(1, 0.4 + 0.6 * Math.max(coverage, top)).toFixed(2)),
    grade_reason: `${covered} of ${terms.size} question terms appear in the evidence; top relevance ${top.toFixed(2)}.`,
    options: [],
  };
}
