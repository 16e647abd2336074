import { standardForm } from '../../common/standard-form.js';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isBehind, ReadReplica, VersionedRead } from '../../database/database.module.js';
import { pgErrorCode } from '../../database/sql.js';
import { Metrics } from '../../observability/metrics.js';
import { ATTR_CANDIDATES_OUT, TRACE_FIELD_PREFIX, traceStage } from '../../observability/spans.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { RetrievalScope } from '../collections/retrieval-scope.js';
import { ChunksRepository } from '../index/chunks.repository.js';
import { IndexStateRepository } from '../index/index-state.repository.js';
import { DenseRanking, DenseRecall } from '../index/dense/dense-recall.service.js';
import { EmbeddingProvider } from '../index/embeddings.js';
import { RetrievalHit } from './retrieval.service.js';
import { FULL_TEXT_MAX_TERMS, fullTextQueryTerms, translatedFullTextQuery } from '../index/search-text.js';
import { translatedTopicWords } from '../../common/topic-words.js';

/** Longest a full-text statement may run before PostgreSQL cancels it; recall then answers from the dense ranking alone. */
export const FULL_TEXT_STATEMENT_TIMEOUT_MS = 3000;

/** PostgreSQL's query_canceled: a statement timeout (or a cancel request). */
const QUERY_CANCELED = '57014';

/**
 * What the full-text ranking of the question's words in the other language weighs in the fusion with the ranking of
 * the question as asked: it adds the documents written in the other language, behind those the question's own words
 * rank (translations are less sure than the words themselves).
 */
const TRANSLATED_WEIGHT = 0.25;

/** The share of the full-text ranking kept for the first documents only the translated ranking found. */
const TRANSLATED_ROOM = 0.25;

/**
 * The question's own full-text ranking with the translated one fused behind it (TRANSLATED_WEIGHT), `limit` ids in
 * all, of which up to TRANSLATED_ROOM are kept for documents only the translation found: a long ranking of the
 * question's own words would otherwise leave none of them.
 */
function withTranslated(asked: string[], across: string[], limit: number): string[] {
  const fused = reciprocalRankFusion([asked, across], [1, TRANSLATED_WEIGHT]).map(({ id }) => id);
  const own = new Set(asked);
  const room = new Set(across.filter((id) => !own.has(id)).slice(0, Math.ceil(limit * TRANSLATED_ROOM)));
  const kept = new Set(fused.filter((id) => !room.has(id)).slice(0, limit - room.size));
  for (const id of room) kept.add(id);
  return fused.filter((id) => kept.has(id)).slice(0, limit);
}

/** Reciprocal rank fusion constant (Cormack et al.). */
export const RRF_K = 60;

/** Fuses ranked id lists: each list gives weight / (RRF_K + rank), its weight 1 unless `weights` says otherwise. */
export function reciprocalRankFusion(rankings: string[][], weights: readonly number[] = []): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  rankings.forEach((ranking, list) => {
    const weight = weights[list] ?? 1;
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + weight / (RRF_K + index + 1)));
  });
  return [...scores.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/** A recalled leaf, with what auto-merge needs to know about its parent. */
export interface RecallCandidate extends RetrievalHit {
  parent_id: string | null;
  level: number;
}

export interface RecallResult {
  candidates: RecallCandidate[];
  /** Names the rankings that were fused, with the dense backend that actually answered. */
  retriever: string;
  /** Set when the configured dense backend failed and another answered. */
  denseError?: string;
  /** Set when there was no dense ranking (the in-memory index is still loading) and the full-text ranking answered alone. */
  denseSkipped?: string;
  /** Distinct terms the full-text query kept, and those it left out (over FULL_TEXT_MAX_TERMS). */
  fullTextTerms: number;
  fullTextTermsDropped: number;
  /** Terms of the full-text query in the other language (0: none was made). */
  fullTextTranslatedTerms: number;
  /** Set when the full-text ranking timed out and the dense ranking answered alone. */
  fullTextError?: string;
}

export interface FullTextRanking {
  ids: string[];
  terms: number;
  dropped: number;
  /** Terms of the query in the other language that were searched as well (0: none). */
  translatedTerms: number;
  /** Why `ids` is empty although the query had terms: the ranking hit the statement timeout. */
  error?: string;
}

/** The recall legs' span attributes: how many ids each ranked, and why one came back degraded. */
function fullTextSpanAttributes(ranking: FullTextRanking) {
  return {
    [ATTR_CANDIDATES_OUT]: ranking.ids.length,
    [`${TRACE_FIELD_PREFIX}full_text_terms`]: ranking.terms,
    [`${TRACE_FIELD_PREFIX}full_text_terms_dropped`]: ranking.dropped,
    [`${TRACE_FIELD_PREFIX}full_text_translated_terms`]: ranking.translatedTerms,
    ...(ranking.error ? { [`${TRACE_FIELD_PREFIX}full_text_error`]: ranking.error } : {}),
  };
}

function denseSpanAttributes(ranking: DenseRanking) {
  return {
    [ATTR_CANDIDATES_OUT]: ranking.ids.length,
    'rag.dense.backend': ranking.backend,
    ...(ranking.error ? { 'rag.dense.error': ranking.error } : {}),
    ...(ranking.skipped ? { [`${TRACE_FIELD_PREFIX}dense_skipped`]: ranking.skipped } : {}),
  };
}

/**
 * Hybrid recall over the leaf chunks: a PostgreSQL full-text ranking (GIN
 * index; Chinese segmented into words and bigrams) and a dense ranking by
 * cosine similarity of embeddings (pgvector or an in-memory index), fused by
 * reciprocal rank fusion.
 */
@Injectable()
export class HybridRecall {
  /**
   * Statement timeout of the full-text ranking (a property so tests can shorten it): never longer than the
   * service's own statement limit, so the server cancels it (57014, answered by the dense ranking) before
   * the client-side read limit gives up on the connection.
   */
  statementTimeoutMs: number;

  private readonly chunks: ChunksRepository;
  private readonly state: IndexStateRepository;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    private readonly dense: DenseRecall,
    @Optional() @Inject(APP_CONFIG) config?: AppConfig,
    @Optional() private readonly metrics?: Metrics,
    @Optional() private readonly replica?: ReadReplica,
  ) {
    this.chunks = new ChunksRepository(dataSource);
    this.state = new IndexStateRepository(dataSource);
    this.statementTimeoutMs = Math.min(FULL_TEXT_STATEMENT_TIMEOUT_MS, config?.database.statementTimeoutMs ?? FULL_TEXT_STATEMENT_TIMEOUT_MS);
  }

  private timed<T>(stage: string, work: () => Promise<T>): Promise<T> {
    return this.metrics ? this.metrics.stage(stage, work) : work();
  }

  /**
   * The `recallK` best leaves of the scope's collections by fused rank, best first: each ranking is of those leaves only.
   * `translate`: the full-text leg also searches with the question's words in the other language (false for a query that
   * is itself a translation).
   */
  async recall(query: string, recallK: number, scope: RetrievalScope, { translate = true }: { translate?: boolean } = {}): Promise<RecallResult> {
    // With a read replica: the search's reads run on it when it holds the knowledge base's version on the primary.
    const reads = this.replica?.configured && !scope.empty ? this.replica.reader('knowledge_search', () => this.state.version()) : undefined;
    const [fullText, dense] = await Promise.all([
      this.timed('full_text', () => traceStage('full_text', undefined, () => this.fullTextRecall(query, recallK, scope, reads, translate), fullTextSpanAttributes)),
      this.timed('dense', () => traceStage('dense', undefined, () => this.dense.rank(standardForm(query), recallK, scope, reads), denseSpanAttributes)),
    ]);
    const fused = reciprocalRankFusion([fullText.ids, dense.ids]).slice(0, recallK);
    const details = await this.chunkDetails(
      fused.map((f) => f.id),
      scope,
      reads,
    );
    const fullTextRank = new Map(fullText.ids.map((id, i) => [id, i + 1]));
    const denseRank = new Map(dense.ids.map((id, i) => [id, i + 1]));
    const candidates = fused.flatMap((f, i) => {
      const chunk = details.get(f.id);
      return chunk
        ? [{ ...chunk, score: Number(f.score.toFixed(6)), rrf_rank: i + 1, fulltext_rank: fullTextRank.get(f.id) ?? null, dense_rank: denseRank.get(f.id) ?? null }]
        : [];
    });
    return {
      candidates,
      retriever: `hybrid-rrf-v1:${this.embeddings.name}:${dense.backend}`,
      denseError: dense.error,
      denseSkipped: dense.skipped,
      fullTextTerms: fullText.terms,
      fullTextTermsDropped: fullText.dropped,
      fullTextTranslatedTerms: fullText.translatedTerms,
      fullTextError: fullText.error,
    };
  }

  /** Leaf ids of the scope ranked by PostgreSQL full-text search (public for the evaluation bench). */
  async fullTextRanking(query: string, limit: number, scope: RetrievalScope): Promise<string[]> {
    return (await this.fullTextRecall(query, limit, scope)).ids;
  }

  /**
   * The full-text ranking with what bounds its cost: at most
   * FULL_TEXT_MAX_TERMS distinct terms, at most FULL_TEXT_CANDIDATE_CAP
   * matches ranked, and a statement timeout, after which the ranking is
   * empty and says why (other database errors propagate). With `translate`,
   * the question's words in the other language (common/topic-words) are
   * searched too, so that a document written in that language is found by
   * what it says, not only by the names and numbers the question shares with
   * it; the two rankings are fused.
   */
  async fullTextRecall(query: string, limit: number, scope: RetrievalScope, reads?: VersionedRead, translate = true): Promise<FullTextRanking> {
    // The query in the standard form (see common/standard-form) and, where that differs, as written: a document is
    // indexed as written, in simplified characters (most) or in traditional ones.
    const read = standardForm(query);
    const { lexemes, dropped } = fullTextQueryTerms(read);
    // The written form's own terms, within the bound on a query's terms (each costs a scan), where it has other ones.
    const writtenTerms = read === query ? [] : fullTextQueryTerms(query).lexemes;
    const written = writtenTerms.some((lexeme) => !lexemes.includes(lexeme)) ? writtenTerms.slice(0, Math.max(0, FULL_TEXT_MAX_TERMS - lexemes.length)) : null;
    const terms = lexemes.length;
    const translated = translate ? translatedFullTextQuery(translatedTopicWords(read)) : null;
    const translatedTerms = translated?.terms ?? 0;
    if ((terms === 0 && !translated) || scope.empty) return { ids: [], terms, dropped, translatedTerms };
    // Chunks with every term first (few, precise: for Chinese, bigram runs act like phrases);
    // then, when they are too few, chunks with any term.
    const ranked = async (chunks: ChunksRepository, manager: EntityManager, all: string, any: string | null) => {
      const every = await chunks.rankFullText(manager, all, limit, scope);
      if (every.length >= limit || any === null) return every;
      return [...new Set([...every, ...(await chunks.rankFullText(manager, any, limit, scope))])].slice(0, limit);
    };
    // null: the ranking hit its own time limit. Answered inside the read, wherever it ran: a replica's timeout is then
    // not run again on the primary (it would most likely time out there too, at twice the cost).
    const rank = async (db: DataSource, atLeast?: string): Promise<{ version: string | null; value: string[] | null }> => {
      const chunks = db === this.chunks.dataSource ? this.chunks : new ChunksRepository(db);
      let version: string | null = null;
      let asked: string[] | null;
      try {
        asked = await chunks.withStatementTimeout(this.statementTimeoutMs, async (manager) => {
          version = chunks === this.chunks ? null : await chunks.indexVersion(manager);
          // A replica behind the version asked for: its ranking would be thrown away (the primary ranks instead).
          if (isBehind(version, atLeast)) return null;
          if (terms === 0) return [];
          if (!written?.length) return await ranked(chunks, manager, lexemes.join(' & '), terms > 1 ? lexemes.join(' | ') : null);
          return await ranked(chunks, manager, `(${lexemes.join(' & ')}) | (${written.join(' & ')})`, [...new Set([...lexemes, ...written])].join(' | '));
        });
      } catch (error) {
        if (pgErrorCode(error) !== QUERY_CANCELED) throw error;
        return { version, value: null };
      }
      if (asked === null) return { version, value: [] };
      if (!translated) return { version, value: asked };
      // The translation is an extra, with its own time limit: when it runs out, the question's own ranking answers.
      let across: string[];
      try {
        across = await chunks.withStatementTimeout(this.statementTimeoutMs, (manager) =>
          ranked(chunks, manager, translated.all, translated.all === translated.any ? null : translated.any),
        );
      } catch (error) {
        if (pgErrorCode(error) !== QUERY_CANCELED) throw error;
        return { version, value: asked };
      }
      return { version, value: withTranslated(asked, across, limit) };
    };
    const ids = reads ? await reads(rank) : (await rank(this.chunks.dataSource)).value;
    if (ids === null) return { ids: [], terms, dropped, translatedTerms, error: `full-text search cancelled after ${this.statementTimeoutMs} ms (statement timeout)` };
    return { ids, terms, dropped, translatedTerms };
  }

  /** Leaf ids of the scope ranked by embedding similarity (public for the evaluation bench). */
  async denseRanking(query: string, limit: number, scope: RetrievalScope): Promise<string[]> {
    return (await this.dense.rank(query, limit, scope)).ids;
  }

  /** The fused leaves' rows, read under the same scope as the rankings (a leaf moved out of it meanwhile is not reported). */
  private async chunkDetails(ids: string[], scope: RetrievalScope, reads?: VersionedRead): Promise<Map<string, Omit<RecallCandidate, 'score'>>> {
    if (ids.length === 0) return new Map();
    const rows = reads ? await reads((db) => new ChunksRepository(db).versionedDetails(ids, scope)) : await this.chunks.details(ids, scope);
    return new Map(
      rows.map((row) => [
        String(row.id),
        {
          chunk_id: String(row.id),
          collection_id: row.collection_id,
          source: row.source,
          page: row.page,
          location: row.location ?? null,
          text: row.text,
          parent_id: row.parent_id === null ? null : String(row.parent_id),
          level: row.level,
        },
      ]),
    );
  }
}
