/** The knowledge base: ingest, retrieval and the dense index. */
import { z } from 'zod';
import { decimal, flag, integer, oneOf } from './values.js';

export const DENSE_BACKENDS = ['auto', 'pgvector', 'memory'] as const;
export const COLLECTION_CREATORS = ['everyone', 'admins'] as const;

export const knowledge = {
  KNOWLEDGE_CORPUS_DIR: z.string().default('corpus').describe('sample documents loaded into an empty default collection'),
  KNOWLEDGE_SEED_ON_START: flag().default(true).describe('load KNOWLEDGE_CORPUS_DIR into the default collection when it is empty'),
  KNOWLEDGE_COLLECTION_CREATORS: oneOf(COLLECTION_CREATORS).default('everyone').describe('who may create knowledge collections: every signed-in user, or administrators only'),
  KNOWLEDGE_TOP_K: integer(1, 20).default(4).describe('passages retrieval returns'),
  KNOWLEDGE_CHUNK_SIZES: z
    .string()
    .regex(/^\d{2,5}(,\d{2,5}){0,3}$/, 'must be 1-4 comma-separated sizes in characters, largest first, e.g. 1200,400')
    .transform((sizes) => sizes.split(',').map(Number))
    // prefault: the default is the text, parsed like a set value.
    .prefault('1200,400')
    .describe('characters per chunk level, parent first, leaf last'),
  KNOWLEDGE_CHUNK_OVERLAP: integer(0, 1000).default(80).describe('characters a leaf repeats from the one before it'),
  KNOWLEDGE_MAX_UPLOAD_BYTES: integer(1024, 100 * 1024 * 1024)
    .default(10 * 1024 * 1024)
    .describe('largest uploaded document'),
  KNOWLEDGE_INGEST_CONCURRENCY: integer(0, 64).default(1).describe('ingest jobs this instance works on at once (0: this instance takes none)'),
  KNOWLEDGE_INGEST_ATTEMPTS: integer(1, 20).default(3).describe('tries of an ingest job that fails for a passing reason'),
  KNOWLEDGE_INGEST_LOCK_MS: integer(1000, 600000).default(30000).describe("how long a worker's hold on a job lasts unrenewed: a dead worker's job moves on after it"),
  KNOWLEDGE_BULK_LEAVES: integer(0, 100_000_000).default(20000).describe('a document with at least this many leaves is bulk-loaded (0: never)'),
  KNOWLEDGE_PARSE_TIMEOUT_MS: integer(1000, 600000)
    .default(60000)
    .describe('longest parse of one uploaded document (in a worker thread); past it the worker is stopped and the job fails with document_too_large'),
  KNOWLEDGE_PARSE_MEMORY_MB: integer(32, 16384)
    .default(512)
    .describe('memory of the worker thread that parses one document (its heap, and the buffers it inflates); over it the job fails with document_too_large'),
  KNOWLEDGE_MAX_EXTRACTED_BYTES: integer(1024, 1024 * 1024 * 1024)
    .default(10 * 1024 * 1024)
    .describe(
      'most text (UTF-8 bytes) one document may yield, and what the parts of a .docx/.xlsx may inflate to; extraction stops there and the job fails with document_too_large',
    ),
  KNOWLEDGE_MAX_PAGES: integer(1, 1_000_000).default(5000).describe('most pages one document may have (checked before its text is extracted)'),
  KNOWLEDGE_MAX_CHUNKS_PER_DOCUMENT: integer(1, 100_000_000)
    .default(100_000)
    .describe('most chunks (parents and leaves) one document may be split into (checked before embedding)'),
};

export const retrieval = {
  // Read as text: an invalid value falls back to the multiplier and is reported in the trace.
  RAG_RECALL_K: z.string().optional().describe('candidates each recall leg keeps (raw text; see RAG_RECALL_MULTIPLIER)'),
  RAG_RECALL_MULTIPLIER: integer(1, 50).default(4).describe('recall size as a multiple of top_k when RAG_RECALL_K is unset or invalid'),
  RAG_AUTO_MERGE: flag().default(true).describe('replace recalled sibling chunks by their parent'),
  RAG_AUTO_MERGE_THRESHOLD: decimal(0.01, 1).default(0.5).describe("share of a parent's children that must be recalled for the merge"),
  RAG_MIN_RELEVANCE: decimal(0, 1).default(0.1).describe('reranked passages scoring below it are dropped'),
};

export const dense = {
  RAG_DENSE_BACKEND: oneOf(DENSE_BACKENDS).default('auto').describe('dense recall backend'),
  RAG_HNSW_EF_SEARCH: integer(10, 1000).default(500).describe('pgvector HNSW candidate list per query'),
  RAG_HNSW_BUILD_MEMORY: z
    .string()
    .regex(/^[1-9][0-9]{0,6}(kB|MB|GB)$/, 'must be a PostgreSQL memory size such as 512MB or 2GB')
    .default('512MB')
    .describe('maintenance_work_mem of an HNSW index build (after a bulk load, at start)'),
};
