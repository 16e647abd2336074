import { containsCjk } from '../../../common/text.js';
import { JudgedRewrite, RewriteJudge } from '../../answering/judges/rewrite-judge.service.js';
import { Rewrite, translatedRewrite } from '../../answering/rewrite.js';
import { RetrievalHit, RetrievalResult, RetrievalService } from '../retrieval.service.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';

export interface RewriteResult extends StageResult<RetrievalHit> {
  rewrite: JudgedRewrite;
  /**
   * The same search with the question in the other language (the glossary's
   * words), when the rewrite asked in the question's own language and the
   * glossary translates it (beside the local rewriter's; after a model's, or its
   * local fallback's, only when it found nothing): the caller keeps whichever evidence grades better.
   */
  across: (StageResult<RetrievalHit> & { rewrite: JudgedRewrite }) | null;
}

/**
 * For weak evidence: rewrites the query once (RewriteJudge: step-back
 * question or hypothetical passage) and retrieves again with it; with the
 * local rewriter, at the same time, with the question in the other language
 * when the rewrite stays in the question's own (the glossary's words, see
 * answering/rewrite), its passages reranked against the question asked, for
 * documents written in that language; with a model's rewrite, only when the
 * rewrite found nothing. The new candidates are the second recall; its
 * timings are kept as `rewrite_<stage>`.
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
    const translated = containsCjk(rewrite.rewritten_query) === containsCjk(query) ? translatedRewrite(query) : null;
    const search = (asked: Rewrite) => {
      step('rewrite', containsCjk(query) ? 'Searching with the question in English' : 'Searching with the question in Chinese', { mode: asked.rewrite_mode });
      return this.retrieval.search(asked.rewritten_query, topK, { scope, onStep: step, question: query, translate: false });
    };
    // Offline, the other language is searched beside the rewrite. With a model, whose rewrite can ask in the documents'
    // language itself and whose grade of each evidence costs a call, it is searched only when the rewrite found nothing.
    const alongside = translated !== null && rewrite.rewrite_judge === 'local';
    // The search beside the rewrite is an extra chance: when it fails, the turn goes on with the rewrite's evidence.
    const [second, searchedAlongside] = await Promise.all([
      // A rewrite in the other language (the documents'), is not translated back.
      this.retrieval.search(rewrite.rewritten_query, topK, { scope, onStep: step, translate: containsCjk(rewrite.rewritten_query) === containsCjk(query) }),
      alongside ? search(translated).catch(() => null) : null,
    ]);
    const across = searchedAlongside ?? (translated && second.hits.length === 0 ? await search(translated) : null);
    const acrossRewrite: JudgedRewrite | null = translated ? { ...translated, rewrite_judge: 'local', rewrite_fallback_reason: null } : null;
    return {
      ...rewriteResult(rewrite, second),
      across: across && acrossRewrite && across.hits.length > 0 ? rewriteResult(acrossRewrite, across) : null,
    };
  }
}

function rewriteResult(rewrite: JudgedRewrite, second: RetrievalResult): StageResult<RetrievalHit> & { rewrite: JudgedRewrite } {
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

function prefixed(prefix: string, timings: Record<string, number> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(timings ?? {}).map(([k, v]) => [`${prefix}${k}`, v]));
}
