import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { sqlRows } from '../database/sql.js';
import { EmbeddingProvider } from './embeddings.js';
import { resolveRecallK } from './recall-k.js';
import { RetrievalHit, RetrievalResult, RetrievalService } from './retrieval.service.js';
import { searchQueryText } from './search-text.js';

/** Reciprocal rank fusion constant (Cormack et al.). */
export const RRF_K = 60;

interface DenseIndex {
  version: string;
  ids: string[];
  vectors: Float32Array;
  dimensions: number;
}

/** Fuses ranked id lists: each list gives 1 / (RRF_K + rank). */
export function reciprocalRankFusion(rankings: string[][]): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (RRF_K + index + 1)));
  }
  return [...scores.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/**
 * Hybrid recall over the leaf chunks: a PostgreSQL full-text ranking (GIN
 * index; Chinese segmented into words and bigrams) and a dense ranking by
 * cosine similarity of embeddings, fused by reciprocal rank fusion. The dense
 * leg scans an in-memory matrix of the leaf embeddings, reloaded whenever the
 * knowledge base changes (a version row), so it needs no database extension.
 */
@Injectable()
export class HybridRetrievalService extends RetrievalService {
  private index?: DenseIndex;
  private loading?: Promise<DenseIndex>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async search(query: string, topK: number): Promise<RetrievalResult> {
    const recall = resolveRecallK(this.config.knowledge.recallKRaw, this.config.knowledge.recallMultiplier, topK);
    const started = performance.now();
    const [fullText, dense] = await Promise.all([this.fullTextRanking(query, recall.recall_k), this.denseRanking(query, recall.recall_k)]);
    const recallMs = performance.now() - started;
    const fused = reciprocalRankFusion([fullText, dense]).slice(0, recall.recall_k);
    const details = await this.chunkDetails(fused.slice(0, topK).map((f) => f.id));
    const hits: RetrievalHit[] = fused.slice(0, topK).flatMap((f, i) => {
      const chunk = details.get(f.id);
      return chunk ? [{ ...chunk, score: Number(f.score.toFixed(6)), rrf_rank: i + 1 }] : [];
    });
    return {
      hits,
      recalled: fused.length,
      mode: 'hybrid',
      pipelineId: `hybrid-rrf-v1:${this.embeddings.name}`,
      trace: {
        ...recall,
        recalled_count: fused.length,
        initial_chunk_level: this.config.knowledge.chunkSizes.length,
        timings: { recall: Math.round(recallMs) },
      },
    };
  }

  private async fullTextRanking(query: string, limit: number): Promise<string[]> {
    const tsquery = searchQueryText(query);
    if (!tsquery) return [];
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `SELECT id FROM knowledge_chunks, to_tsquery('simple', $1) q
        WHERE is_leaf AND search_vector @@ q
        ORDER BY ts_rank_cd(search_vector, q) DESC, id
        LIMIT $2`,
      [tsquery, limit],
    );
    return rows.map((row) => String(row.id));
  }

  private async denseRanking(query: string, limit: number): Promise<string[]> {
    const [[queryVector], index] = await Promise.all([this.embeddings.embed([query]), this.currentIndex()]);
    const { ids, vectors, dimensions } = index;
    if (ids.length === 0 || queryVector.length !== dimensions) return [];
    const q = Float32Array.from(queryVector);
    // Keep the best `limit` by a small insertion-sorted buffer: O(n·limit) worst case, O(n) in practice.
    const bestIds: number[] = [];
    const bestScores: number[] = [];
    for (let row = 0; row < ids.length; row += 1) {
      let dot = 0;
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d += 1) dot += q[d] * vectors[offset + d];
      if (dot <= 0) continue;
      if (bestScores.length === limit && dot <= bestScores[limit - 1]) continue;
      let at = bestScores.length;
      while (at > 0 && bestScores[at - 1] < dot) at -= 1;
      bestScores.splice(at, 0, dot);
      bestIds.splice(at, 0, row);
      if (bestScores.length > limit) {
        bestScores.pop();
        bestIds.pop();
      }
    }
    return bestIds.map((row) => ids[row]);
  }

  private async currentIndex(): Promise<DenseIndex> {
    const [{ version }] = await sqlRows<{ version: string }>(this.dataSource, 'SELECT version::text FROM knowledge_index_state WHERE id = 1');
    if (this.index?.version === version) return this.index;
    if (!this.loading) {
      this.loading = this.loadIndex(version).finally(() => (this.loading = undefined));
    }
    this.index = await this.loading;
    return this.index;
  }

  private async loadIndex(version: string): Promise<DenseIndex> {
    const dimensions = this.embeddings.dimensions;
    const rows = await sqlRows<{ id: string; embedding: number[] | null }>(
      this.dataSource,
      'SELECT id, embedding FROM knowledge_chunks WHERE is_leaf AND embedding IS NOT NULL ORDER BY id',
    );
    const usable = rows.filter((row) => row.embedding?.length === dimensions);
    const vectors = new Float32Array(usable.length * dimensions);
    usable.forEach((row, i) => vectors.set(row.embedding!, i * dimensions));
    return { version, ids: usable.map((row) => String(row.id)), vectors, dimensions };
  }

  private async chunkDetails(ids: string[]): Promise<Map<string, Omit<RetrievalHit, 'score'>>> {
    if (ids.length === 0) return new Map();
    const rows = await sqlRows<{ id: string; text: string; page: number | null; source: string }>(
      this.dataSource,
      `SELECT c.id, c.text, c.page, d.filename AS source
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE c.id = ANY($1::bigint[])`,
      [ids],
    );
    return new Map(rows.map((row) => [String(row.id), { chunk_id: String(row.id), source: row.source, page: row.page, text: row.text }]));
  }
}
