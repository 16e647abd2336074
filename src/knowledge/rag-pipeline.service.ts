import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { withTimeout } from '../common/with-timeout.js';
import { sqlRows } from '../database/sql.js';
import { HybridRecall, RecallCandidate } from './hybrid-recall.service.js';
import { resolveRecallK } from './recall-k.js';
import { RerankProvider } from './rerank.js';
import { RetrievalResult, RetrievalService, StepReporter } from './retrieval.service.js';

export const RERANK_PROVIDER = Symbol('RERANK_PROVIDER');

interface ParentInfo {
  id: string;
  text: string;
  page: number | null;
  level: number;
  children: number;
}

/**
 * Replaces recalled children by their parent when at least `threshold` of
 * the parent's children were recalled (and at least two). The parent takes
 * the place and scores of its best child.
 */
export function autoMerge(
  candidates: RecallCandidate[],
  parents: Map<string, ParentInfo>,
  threshold: number,
): { merged: RecallCandidate[]; replaced: number; level: number | null } {
  const byParent = new Map<string, RecallCandidate[]>();
  for (const candidate of candidates) {
    if (candidate.parent_id) byParent.set(candidate.parent_id, [...(byParent.get(candidate.parent_id) ?? []), candidate]);
  }
  const mergeable = new Set(
    [...byParent.entries()]
      .filter(([parentId, children]) => {
        const parent = parents.get(parentId);
        return parent && children.length >= 2 && children.length / parent.children >= threshold;
      })
      .map(([parentId]) => parentId),
  );
  if (mergeable.size === 0) return { merged: candidates, replaced: 0, level: null };
  const merged: RecallCandidate[] = [];
  const placed = new Set<string>();
  let replaced = 0;
  let level: number | null = null;
  for (const candidate of candidates) {
    const parentId = candidate.parent_id;
    if (!parentId || !mergeable.has(parentId)) {
      merged.push(candidate);
      continue;
    }
    replaced += 1;
    if (placed.has(parentId)) continue;
    placed.add(parentId);
    const parent = parents.get(parentId)!;
    level = parent.level;
    merged.push({ ...candidate, chunk_id: parent.id, text: parent.text, page: parent.page ?? candidate.page, parent_id: null, level: parent.level });
  }
  return { merged, replaced, level };
}

/**
 * The retrieval pipeline: hybrid recall, auto-merge, rerank with a minimum
 * relevance, top_k. Each stage writes the trace fields it owns from what it
 * did, and reports itself as a step.
 */
@Injectable()
export class RagPipeline extends RetrievalService {
  constructor(
    private readonly recall: HybridRecall,
    @Inject(RERANK_PROVIDER) private readonly reranker: RerankProvider | null,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async search(query: string, topK: number, options: { onStep?: StepReporter } = {}): Promise<RetrievalResult> {
    const step: StepReporter = options.onStep ?? (() => undefined);
    const knowledge = this.config.knowledge;
    const timings: Record<string, number> = {};
    const time = async <T>(stage: string, fn: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await fn();
      } finally {
        timings[stage] = Math.round(performance.now() - started);
      }
    };

    const recallConfig = resolveRecallK(knowledge.recallKRaw, knowledge.recallMultiplier, topK);
    step('recall', 'Hybrid recall: full-text and dense rankings, fused', { recall_k: recallConfig.recall_k });
    const recalled = await time('recall', () => this.recall.recall(query, recallConfig.recall_k));
    const candidates = recalled.candidates;
    if (recalled.denseError) {
      step('recall_degraded', 'Dense search failed; answered from the in-memory index', { error: recalled.denseError });
    }
    if (recalled.fullTextError) {
      step('recall_degraded', 'Full-text search took too long; answered from the dense ranking alone', { error: recalled.fullTextError });
    }

    let merged = candidates;
    let mergeTrace: Record<string, unknown> = {
      auto_merge_enabled: knowledge.autoMerge,
      auto_merge_applied: false,
      auto_merge_threshold: knowledge.autoMergeThreshold,
      auto_merge_replaced_count: 0,
      auto_merge_level: null,
    };
    if (knowledge.autoMerge && candidates.length > 1) {
      step('auto_merge', 'Merging sibling chunks into their parents', { candidates: candidates.length });
      const result = await time('auto_merge', async () => autoMerge(candidates, await this.parentsOf(candidates), knowledge.autoMergeThreshold));
      merged = result.merged;
      mergeTrace = { ...mergeTrace, auto_merge_applied: result.replaced > 0, auto_merge_replaced_count: result.replaced, auto_merge_level: result.level };
    }

    let ordered = merged;
    const rerankTrace: Record<string, unknown> = {
      rerank_enabled: this.reranker !== null,
      rerank_applied: false,
      rerank_model: this.reranker?.model ?? null,
      rerank_endpoint: this.reranker?.endpoint ?? null,
      rerank_timeout_ms: this.reranker?.timeoutMs,
      rerank_error: null,
      rerank_input_count: 0,
      rerank_output_count: 0,
    };
    if (this.reranker && merged.length > 0) {
      step('rerank', `Reranking ${merged.length} candidates`, { model: this.reranker.model });
      rerankTrace.rerank_input_count = merged.length;
      try {
        const scores = await time('rerank', () =>
          withTimeout(
            this.reranker!.score(query, merged.map((c) => c.text)),
            this.reranker!.timeoutMs,
            () => new Error(`rerank timed out after ${this.reranker!.timeoutMs} ms`),
          ),
        );
        ordered = merged
          .map((c, i) => ({ ...c, rerank_score: Number(scores[i].toFixed(4)) }))
          .sort((a, b) => b.rerank_score - a.rerank_score || (a.rrf_rank ?? 0) - (b.rrf_rank ?? 0));
        rerankTrace.rerank_applied = true;
        rerankTrace.rerank_output_count = ordered.length;
      } catch (error) {
        // The fused order stands; the trace says why.
        rerankTrace.rerank_error = (error as Error).message;
      }
    }
    const applied = rerankTrace.rerank_applied === true;
    const passing = applied ? ordered.filter((c) => (c.rerank_score ?? 0) >= knowledge.minRelevance) : ordered;
    const final = passing.slice(0, topK);
    step('retrieved', `Kept ${final.length} passage(s)`, { count: final.length });

    const strip = ({ parent_id: _p, level: _l, ...hit }: RecallCandidate) => hit;
    return {
      hits: final.map(strip),
      recalled: candidates.length,
      mode: 'hybrid',
      pipelineId: `${recalled.retriever}+merge+${this.reranker?.model ?? 'no-rerank'}`,
      trace: {
        ...recallConfig,
        top_k: topK,
        recalled_count: candidates.length,
        initial_chunk_level: knowledge.chunkSizes.length,
        full_text_terms: recalled.fullTextTerms,
        full_text_terms_dropped: recalled.fullTextTermsDropped,
        full_text_error: recalled.fullTextError ?? null,
        ...mergeTrace,
        candidates_after_merge: merged.length,
        ...rerankTrace,
        min_relevance: applied ? knowledge.minRelevance : null,
        after_threshold_count: passing.length,
        final_empty: final.length === 0,
        initial_chunks: ordered.map(strip),
        final_chunks: final.map(strip),
        timings,
      },
    };
  }

  private async parentsOf(candidates: RecallCandidate[]): Promise<Map<string, ParentInfo>> {
    const ids = [...new Set(candidates.map((c) => c.parent_id).filter((id): id is string => id !== null))];
    if (ids.length === 0) return new Map();
    const rows = await sqlRows<ParentInfo>(
      this.dataSource,
      `SELECT p.id::text AS id, p.text, p.page, p.level,
              (SELECT count(*)::int FROM knowledge_chunks s WHERE s.parent_id = p.id) AS children
         FROM knowledge_chunks p WHERE p.id = ANY($1::bigint[])`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, row]));
  }
}
