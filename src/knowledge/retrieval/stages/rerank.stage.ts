import { withTimeout } from '../../../common/with-timeout.js';
import { RecallCandidate } from '../hybrid-recall.service.js';
import { RerankProvider } from '../rerank.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';
import { toHit } from './to-hit.js';

/** Reranks the candidates (RERANK_PROVIDER) by their relevance to the question asked; when the reranker fails or times out the fused order stands and the trace says why. */
export class RerankStage implements RetrievalStage<RecallCandidate> {
  readonly name = 'rerank';

  constructor(private readonly reranker: RerankProvider | null) {}

  async run({ question, candidates }: StageState<RecallCandidate>, { step, time }: StageContext): Promise<StageResult<RecallCandidate>> {
    const reranker = this.reranker;
    let ordered = candidates;
    let applied = false;
    let error: string | null = null;
    if (reranker && candidates.length > 0) {
      step('rerank', `Reranking ${candidates.length} candidates`, { model: reranker.model });
      try {
        const scores = await time('rerank', () =>
          withTimeout(
            reranker.score(
              question,
              candidates.map((c) => c.text),
            ),
            reranker.timeoutMs,
            () => new Error(`rerank timed out after ${reranker.timeoutMs} ms`),
          ),
        );
        ordered = candidates
          .map((c, i) => ({ ...c, rerank_score: Number(scores[i].toFixed(4)) }))
          .sort((a, b) => b.rerank_score - a.rerank_score || (a.rrf_rank ?? 0) - (b.rrf_rank ?? 0));
        applied = true;
      } catch (failure) {
        error = (failure as Error).message;
      }
    }
    return {
      candidates: ordered,
      pipelinePart: reranker?.model ?? 'no-rerank',
      trace: {
        rerank_enabled: reranker !== null,
        rerank_applied: applied,
        rerank_model: reranker?.model ?? null,
        rerank_endpoint: reranker?.endpoint ?? null,
        rerank_timeout_ms: reranker?.timeoutMs,
        rerank_error: error,
        rerank_input_count: reranker && candidates.length > 0 ? candidates.length : 0,
        rerank_output_count: applied ? ordered.length : 0,
        initial_chunks: ordered.map(toHit),
      },
    };
  }
}
