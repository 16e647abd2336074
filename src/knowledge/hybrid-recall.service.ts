import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { sqlRows } from '../database/sql.js';
import { EmbeddingProvider } from './embeddings.js';
import { RetrievalHit } from './retrieval.service.js';
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
/** A recalled leaf, with what auto-merge needs to know about its parent. */
export interface RecallCandidate extends RetrievalHit {
  parent_id: string | null;
  level: number;
}

@Injectable()
export class HybridRecall {
  private index?: DenseIndex;
  private loading?: Promise<DenseIndex>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get name(): string {
    return `hybrid-rrf-v1:${this.embeddings.name}`;
  }

  /** The `recallK` best leaves by fused rank, best first. */
  async recall(query: string, recallK: number): Promise<RecallCandidate[]> {
    const [fullText, dense] = await Promise.all([this.fullTextRanking(query, recallK), this.denseRanking(query, recallK)]);
    const fused = reciprocalRankFusion([fullText, dense]).slice(0, recallK);
    const details = await this.chunkDetails(fused.map((f) => f.id));
    return fused.flatMap((f, i) => {
      const chunk = details.get(f.id);
      return chunk ? [{ ...chunk, score: Number(f.score.toFixed(6)), rrf_rank: i + 1 }] : [];
    });
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

  private async chunkDetails(ids: string[]): Promise<Map<string, Omit<RecallCandidate, 'score'>>> {
    if (ids.length === 0) return new Map();
    const rows = await sqlRows<{ id: string; text: string; page: number | null; source: string; parent_id: string | null; level: number }>(
      this.dataSource,
      `SELECT c.id, c.text, c.page, c.parent_id, c.level, d.filename AS source
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE c.id = ANY($1::bigint[])`,
      [ids],
    );
    return new Map(
      rows.map((row) => [
        String(row.id),
        {
          chunk_id: String(row.id),
          source: row.source,
          page: row.page,
          text: row.text,
          parent_id: row.parent_id === null ? null : String(row.parent_id),
          level: row.level,
        },
      ]),
    );
  }
}
