import type { AppConfig } from '../../../config/app-config.js';
import { HybridRecall, RecallCandidate } from '../hybrid-recall.service.js';
import { resolveRecallK } from '../recall-k.js';
import { RetrievalStage, StageContext, StageResult, StageState } from './retrieval-stage.js';

/** Hybrid recall: the full-text and dense rankings, fused by reciprocal rank fusion (inside HybridRecall). */
export class RecallStage implements RetrievalStage<RecallCandidate> {
  readonly name = 'recall';

  constructor(
    private readonly recall: HybridRecall,
    private readonly knowledge: AppConfig['knowledge'],
  ) {}

  async run(state: StageState<RecallCandidate>, { step, time }: StageContext): Promise<StageResult<RecallCandidate>> {
    const recallConfig = resolveRecallK(this.knowledge.recallKRaw, this.knowledge.recallMultiplier, state.topK);
    step('recall', 'Hybrid recall: full-text and dense rankings, fused', { recall_k: recallConfig.recall_k });
    const recalled = await time('recall', () => this.recall.recall(state.query, recallConfig.recall_k, state.scope, { translate: state.translate }));
    if (recalled.denseError) {
      step('recall_degraded', 'Dense search failed; answered from the in-memory index', { error: recalled.denseError });
    }
    if (recalled.denseSkipped) {
      step('recall_degraded', 'The dense index is still loading; answered from the full-text ranking alone', { error: recalled.denseSkipped });
    }
    if (recalled.fullTextError) {
      step('recall_degraded', 'Full-text search took too long; answered from the dense ranking alone', { error: recalled.fullTextError });
    }
    return {
      candidates: recalled.candidates,
      pipelinePart: recalled.retriever,
      trace: {
        ...recallConfig,
        recalled_count: recalled.candidates.length,
        initial_chunk_level: this.knowledge.chunkSizes.length,
        full_text_terms: recalled.fullTextTerms,
        full_text_terms_dropped: recalled.fullTextTermsDropped,
        full_text_translated_terms: recalled.fullTextTranslatedTerms,
        full_text_error: recalled.fullTextError ?? null,
        dense_skipped: recalled.denseSkipped ?? null,
      },
    };
  }
}
