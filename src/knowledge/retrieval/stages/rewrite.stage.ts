import { JudgedRewrite, RewriteJudge } from '../../answering/judges/rewrite-judge.service.js';
import { RetrievalHit, RetrievalService } from '../retrieval.service.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';

export interface RewriteResult extends StageResult<RetrievalHit> {
  rewrite: JudgedRewrite;
}

/**
 * For weak evidence: rewrites the query once (RewriteJudge: step-back
 * question or hypothetical passage) and retrieves again with it. The new
 * candidates are the second recall; its timings are kept as `rewrite_<stage>`.
 */
export class RewriteStage implements RetrievalStage<RetrievalHit> {
  readonly name = 'rewrite';

  constructor(
    private readonly judge: RewriteJudge,
    private readonly retrieval: RetrievalService,
  ) {}

  async run({ query, topK, scope, candidates }: StageState<RetrievalHit>, { step }: StageContext): Promise<RewriteResult> {
    const rewrite = await this.judge.rewrite(query, candidates);
    step('rewrite', rewrite.rewrite_mode === 'step_back' ? 'Asking a step-back question' : 'Searching with a hypothetical answer', {
      mode: rewrite.rewrite_mode,
    });
    const second = await this.retrieval.search(rewrite.rewritten_query, topK, { scope, onStep: step });
    return {
      candidates: second.hits,
      rewrite,
      trace: {
        rewrite_mode: rewrite.rewrite_mode,
        rewritten_query: rewrite.rewritten_query,
        step_back_question: rewrite.step_back_question,
        hypothetical_doc: rewrite.hypothetical_doc,
        rewrite_judge: rewrite.rewrite_judge,
        rewrite_fallback_reason: rewrite.rewrite_fallback_reason,
        rewrite_chunks: second.hits,
        timings: prefixed('rewrite_', second.trace?.timings),
      },
    };
  }
}

function prefixed(prefix: string, timings: Record<string, number> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(timings ?? {}).map(([k, v]) => [`${prefix}${k}`, v]));
}
