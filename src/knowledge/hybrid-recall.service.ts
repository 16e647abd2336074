import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { sqlRows } from '../database/sql.js';
import { EmbeddingProvider } from './embeddings.js';
import { RetrievalHit } from './retrieval.service.js';
import { searchQueryTokens } from './search-text.js';

/** Most full-text matches ranked per query (see rankFullText). */
export const FULL_TEXT_CANDIDATE_CAP = 1000;

/** Reciprocal rank fusion constant (Cormack et al.). */
export const RRF_K = 60;

interface DenseIndex {
  version: string;
  ids: string[];
  vectors: Float32Array;
  dimensions: number;
}

/** The dot product of `query` with each of `rows` vectors; unrolled by four, which V8 runs about 1.5x faster. */
export function dotProducts(query: Float32Array, vectors: Float32Array, rows: number, dimensions: number): Float32Array {
  const scores = new Float32Array(rows);
  const blocked = dimensions - (dimensions % 4);
  for (let row = 0; row < rows; row += 1) {
    const offset = row * dimensions;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let d = 0; d < blocked; d += 4) {
      s0 += query[d] * vectors[offset + d];
      s1 += query[d + 1] * vectors[offset + d + 1];
      s2 += query[d + 2] * vectors[offset + d + 2];
      s3 += query[d + 3] * vectors[offset + d + 3];
    }
    for (let d = blocked; d < dimensions; d += 1) s0 += query[d] * vectors[offset + d];
    scores[row] = s0 + s1 + s2 + s3;
  }
  return scores;
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

  /** Leaf ids ranked by PostgreSQL full-text search (public for the evaluation bench). */
  async fullTextRanking(query: string, limit: number): Promise<string[]> {
    const tokens = searchQueryTokens(query);
    if (tokens.length === 0) return [];
    // Chunks with every term first (few, precise: for Chinese, bigram runs act like phrases);
    // then, when they are too few, chunks with any term.
    const all = await this.rankFullText(tokens.join(' & '), limit);
    if (all.length >= limit || tokens.length === 1) return all;
    const any = await this.rankFullText(tokens.join(' | '), limit);
    return [...new Set([...all, ...any])].slice(0, limit);
  }

  private async rankFullText(tsquery: string, limit: number): Promise<string[]> {
    // Ranking reads every match's tsvector; capping the matches bounds the cost of very common terms
    // (the ranking is then over the first FULL_TEXT_CANDIDATE_CAP matches the GIN index yields).
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `WITH matches AS (
         SELECT id, search_vector FROM knowledge_chunks, to_tsquery('simple', $1) q
          WHERE is_leaf AND search_vector @@ q
          LIMIT ${FULL_TEXT_CANDIDATE_CAP}
       )
       SELECT id FROM matches, to_tsquery('simple', $1) q
        ORDER BY ts_rank(search_vector, q) DESC, id
        LIMIT $2`,
      [tsquery, limit],
    );
    return rows.map((row) => String(row.id));
  }

  /** Leaf ids ranked by embedding similarity (public for the evaluation bench). */
  async denseRanking(query: string, limit: number): Promise<string[]> {
    const [[queryVector], index] = await Promise.all([this.embeddings.embed([query]), this.currentIndex()]);
    const { ids, vectors, dimensions } = index;
    if (ids.length === 0 || queryVector.length !== dimensions) return [];
    const q = Float32Array.from(queryVector);
    const scores = dotProducts(q, vectors, ids.length, dimensions);
    // Keep the best `limit` by a small insertion-sorted buffer: a linear pass, since few rows beat the buffer's minimum.
    const bestIds: number[] = [];
    const bestScores: number[] = [];
    for (let row = 0; row < ids.length; row += 1) {
      const dot = scores[row];
      if (dot <= 0 || (bestScores.length === limit && dot <= bestScores[limit - 1])) continue;
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
    const rows = await sqlRows<{ id: string; embedding: Buffer | null }>(
      this.dataSource,
      'SELECT id, embedding FROM knowledge_chunks WHERE is_leaf AND embedding IS NOT NULL ORDER BY id',
    );
    const bytes = dimensions * Float32Array.BYTES_PER_ELEMENT;
    const usable = rows.filter((row) => row.embedding?.length === bytes);
    const vectors = new Float32Array(usable.length * dimensions);
    usable.forEach((row, i) =>
      vectors.set(new Float32Array(row.embedding!.buffer, row.embedding!.byteOffset, dimensions), i * dimensions),
    );
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
