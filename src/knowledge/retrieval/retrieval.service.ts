import type { RagTraceFields } from '../../trace/trace.protocol.js';
import type { ChunkLocation } from '../ingest/extraction-budget.js';
import type { RetrievalScope } from '../collections/retrieval-scope.js';

/**
 * One retrieved passage: the wire shape of RetrievedChunk. A type alias, not an
 * interface, so a list of hits is assignable to the trace's chunk lists.
 */
export type RetrievalHit = {
  chunk_id: string;
  /** The collection of the chunk's document. */
  collection_id: string;
  source: string;
  page: number | null;
  /** Where in the source besides the page: a spreadsheet's sheet and row, a passage's heading path; null: nothing more. */
  location?: ChunkLocation | null;
  text: string;
  score: number;
  rrf_rank?: number;
  /** Rank in the full-text and the dense recall leg (null: that leg did not find it), before fusion. */
  fulltext_rank?: number | null;
  dense_rank?: number | null;
  rerank_score?: number;
};

/** Reports a pipeline stage as it happens (the request context's emitRagStep). */
export type StepReporter = (stage: string, label: string, details?: Record<string, unknown>) => void;

export interface RetrievalResult {
  hits: RetrievalHit[];
  /** How many candidates matched at all before cutting to top_k. */
  recalled: number;
  mode: string;
  pipelineId: string;
  /** Trace fields the retrieval stages own (recall configuration, merge, rerank, threshold, timings). */
  trace?: RagTraceFields;
}

export interface SearchOptions {
  /** The collections the search reads (every chunk it reads, in every stage, is of them). */
  scope: RetrievalScope;
  onStep?: StepReporter;
  /** The question the user asked, when `query` is a rewrite of it: the rerank judges passages against the question. */
  question?: string;
  /**
   * Whether the full-text leg also searches with the query's words in the other language (see HybridRecall); true
   * unless the query is itself in the other language than the user's question (a rewrite that translated it).
   */
  translate?: boolean;
}

/**
 * What the knowledge tool asks of retrieval. The injection token is the
 * class itself; the knowledge module provides the implementation.
 */
export abstract class RetrievalService {
  abstract search(query: string, topK: number, options: SearchOptions): Promise<RetrievalResult>;
}
