import type { AppConfig } from '../../../config/app-config.js';
import { RecallCandidate } from '../hybrid-recall.service.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';
import { toHit } from './to-hit.js';

/** Drops reranked passages below RAG_MIN_RELEVANCE (only when the rerank ran: fused scores are on another scale) and keeps top_k. */
export class ThresholdStage implements RetrievalStage<RecallCandidate> {
  readonly name = 'threshold';

  constructor(private readonly knowledge: AppConfig['knowledge']) {}

  async run({ candidates, topK, trace }: StageState<RecallCandidate>, { step }: StageContext): Promise<StageResult<RecallCandidate>> {
    const minRelevance = this.knowledge.minRelevance;
    const applied = trace.rerank_applied === true;
    const passing = applied ? candidates.filter((c) => (c.rerank_score ?? 0) >= minRelevance) : candidates;
    const final = passing.slice(0, topK);
    step('retrieved', `Kept ${final.length} passage(s)`, { count: final.length });
    return {
      candidates: final,
      trace: {
        top_k: topK,
        min_relevance: applied ? minRelevance : null,
        after_threshold_count: passing.length,
        final_empty: final.length === 0,
        final_chunks: final.map(toHit),
      },
    };
  }
}
