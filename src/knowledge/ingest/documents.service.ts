import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../common/keyset-cursor.js';
import { tokenize } from '../../common/text.js';
import { isUniqueViolation } from '../../database/sql.js';
import { buildChunkTreeIncrementally, ChunkNode, yieldToEventLoop } from './chunker.js';
import { documentNameProblem, InvalidDocumentNameError } from './document-name.js';
import { buildTableTree } from './table-chunks.js';
import { DocumentTooLargeError, parseDocument } from './document-parser.js';
import { DenseRecall } from '../index/dense/dense-recall.service.js';
import { ChunksRepository } from '../index/chunks.repository.js';
import { DocumentsRepository, KnowledgeDocument } from '../index/documents.repository.js';
import { IndexStateRepository } from '../index/index-state.repository.js';
import { insertChunkTree, LeafPreparer, PreparedLeaf } from '../index/chunk-writer.js';
import { EmbeddingProvider } from '../index/embeddings.js';
import { IndexIdentity } from '../index/index-identity.js';
import { searchTextOfTokens } from '../index/search-text.js';
import { DEFAULT_COLLECTION_ID } from '../collections/collection.js';

/** Leaves tokenized (for their search text and embedding) between two yields to the event loop: a few milliseconds of work. */
export const TOKENIZE_BATCH = 32;

/**
 * The stages of an ingest, in order, as its progress reports them. With
 * in-process embeddings (EmbeddingProvider.embedsInProcess) the leaves are
 * embedded while they are stored, and the pass is reported as storing.
 */
export type IngestStage = 'parsing' | 'embedding' | 'storing' | 'indexing';

/** `done` of `total` units of `stage`: leaves embedded, rows stored; parsing and indexing count 0 of 1, then 1 of 1. */
/**
 * How far an ingest is. `inTransaction`: called inside the document's
 * transaction, where nothing may wait on another connection (the embedded
 * database runs one transaction at a time: such a write would wait for this
 * one to end).
 */
export type IngestProgress = (stage: IngestStage, done: number, total: number, where?: { inTransaction: boolean }) => void | Promise<void>;

export interface IngestOptions {
  /** The collection the document goes to (identical content is stored once per collection); unset: `default`. */
  collectionId?: string;
  onProgress?: IngestProgress;
  /**
   * A bulk load: with pgvector its leaves are kept out of the current HNSW
   * index while they are written, and an index that covers them is built
   * after the load and swapped in (see DenseRecall.finishBulkLoad). Unset:
   * chosen by the document's size (DenseRecall.worthBulkLoad).
   */
  bulk?: boolean;
  /** The new document's id (an ingest job's own id, so that a retried job recognises the document it stored). */
  documentId?: string;
  /**
   * Asked after a bulk load's commit: true leaves the HNSW index build to a
   * later bulk load (the next document of the same load), since one build
   * covers the leaves of every load before it. Leaves left without a build
   * are searchable by full text at once, and by the dense leg after the
   * later build (or DenseRecall.finishPendingBulkLoads).
   */
  deferIndexBuild?: () => boolean | Promise<boolean>;
  /**
   * Runs in the document's transaction once its rows are written, just
   * before it commits; a throw rolls the document back. An ingest job claims
   * its document here, and finds out whether it was cancelled meanwhile.
   */
  beforeCommit?: (manager: EntityManager) => Promise<void>;
}

/** Documents per page of `list`: by default, and at most. */
export const DOCUMENT_PAGE_DEFAULT = 100;
export const DOCUMENT_PAGE_MAX = 1000;

export interface DocumentPage {
  documents: KnowledgeDocument[];
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null;
}

export type { KnowledgeDocument };

/** The document an ingest stored was deleted before the ingest ended (say, during a bulk load's index build). */
export class DocumentRemovedError extends Error {
  constructor(readonly documentId: string) {
    super(`document ${documentId} was deleted before its ingest ended`);
    this.name = 'DocumentRemovedError';
  }
}

export interface IngestResult {
  document: KnowledgeDocument;
  duplicate: boolean;
}

/**
 * Documents of the knowledge base: parsed, split into a chunk hierarchy,
 * embedded, stored in one transaction. The CPU-heavy preparation (chunking,
 * tokenizing, embedding) runs in small batches that yield to the event loop,
 * so a large document does not hold up other requests; the rows are then
 * inserted a bounded batch per statement. Every way in (upload, seeder,
 * `npm run knowledge:ingest`) goes through `ingest`.
 */
@Injectable()
export class DocumentsService {
  private readonly logger = new Logger(DocumentsService.name);
  private readonly repository: DocumentsRepository;
  private readonly chunks: ChunksRepository;
  private readonly state: IndexStateRepository;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    private readonly dense: DenseRecall,
    private readonly identity: IndexIdentity,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.repository = new DocumentsRepository(dataSource);
    this.chunks = new ChunksRepository(dataSource);
    this.state = new IndexStateRepository(dataSource);
  }

  /**
   * Stores a document; identical content already stored is returned as it is (`duplicate: true`).
   * Throws InvalidDocumentNameError for a name that cannot be stored, and the parser's errors for unreadable content.
   */
  async ingest(filename: string, data: Buffer, createdBy: string, options: IngestOptions = {}): Promise<IngestResult> {
    const { onProgress } = options;
    const nameProblem = documentNameProblem(filename);
    if (nameProblem) throw new InvalidDocumentNameError(nameProblem);
    const sha256 = contentHash(data);
    const id = options.documentId ?? randomUUID();
    const collectionId = options.collectionId ?? DEFAULT_COLLECTION_ID;
    const existing = await this.findBySha(sha256, collectionId);
    if (existing) return { document: existing, duplicate: existing.id !== id };

    const started = performance.now();
    await onProgress?.('parsing', 0, 1);
    const { chunkSizes, chunkOverlap, parseTimeoutMs, parseMemoryMb, maxExtractedBytes, maxPages, maxChunksPerDocument } = this.config.knowledge;
    const parsed = await parseDocument(filename, data, { timeoutMs: parseTimeoutMs, memoryMb: parseMemoryMb, maxExtractedBytes, maxPages });
    const tree = [...(await buildChunkTreeIncrementally(parsed.pages, chunkSizes, chunkOverlap)), ...(await buildTableTree(parsed.tables, chunkSizes))];
    const rowCount = countNodes(tree);
    if (rowCount > maxChunksPerDocument) {
      throw new DocumentTooLargeError(`${filename} is too large: it makes ${rowCount} chunks, more than the ${maxChunksPerDocument} a document may have`);
    }
    await onProgress?.('parsing', 1, 1);
    const chunked = performance.now();
    const leaves = flattenLeaves(tree);
    // In-process embeddings are computed batch by batch inside the transaction, overlapping the writes (one pass,
    // reported as storing); a remote API is called for the whole document first.
    const onePass = this.embeddings.embedsInProcess;
    const prepared = onePass ? null : await this.prepareLeaves(leaves, onProgress);
    const prepare: LeafPreparer = prepared ? async () => prepared : (nodes) => this.prepareLeaves(nodes);
    const embedded = performance.now();
    const bulk = options.bulk ?? (await this.dense.worthBulkLoad(leaves.length));
    const denseEpoch = await this.dense.epochForNewLeaves(bulk);
    const outsideIndex = bulk && this.dense.bulkLoadsOutsideIndex;
    try {
      await onProgress?.('storing', 0, rowCount);
      await this.dataSource.transaction(async (manager) => {
        await this.repository.insert(manager, id, {
          collectionId,
          filename,
          contentType: parsed.contentType,
          sizeBytes: data.length,
          sha256,
          pageCount: parsed.pageCount,
          chunkCount: rowCount,
          leafCount: leaves.length,
          createdBy,
        });
        const target = { collectionId, spaceId: this.identity.spaceId, denseEpoch, withVectorColumn: this.dense.writesVectorColumn };
        await insertChunkTree(this.chunks, manager, id, tree, chunkSizes.length, prepare, target, (written) => onProgress?.('storing', written, rowCount, { inTransaction: true }));
        await options.beforeCommit?.(manager);
        await this.identity.checkBeforeCommit(manager);
        // A bulk load outside the index: when it committed (and the first since the last build) tells the jobs'
        // reconciler when its load has ended (DenseRecall.finishPendingBulkLoads).
        await this.state.bumpVersion(manager, outsideIndex);
      });
    } catch (error) {
      // The same content uploaded at the same moment by someone else.
      if (isUniqueViolation(error)) {
        const winner = await this.findBySha(sha256, collectionId);
        if (winner) return { document: winner, duplicate: winner.id !== id };
      }
      throw error;
    }
    const stored = performance.now();
    // Nothing after the commit fails the ingest: a failed check builds now.
    const deferred =
      outsideIndex &&
      (await Promise.resolve()
        .then(() => options.deferIndexBuild?.())
        .catch(() => false)) === true;
    if (bulk && !deferred) {
      await onProgress?.('indexing', 0, 1);
      // The document is stored (and found by full text); a failed build is repaired at the next start or bulk load.
      await this.dense
        .finishBulkLoad(denseEpoch)
        .catch((error: Error) =>
          this.logger.warn({ err: error }, `${filename}: the dense index was not rebuilt after its bulk load (${error.message}); it is at the next start or bulk load`),
        );
      await onProgress?.('indexing', 1, 1);
    }
    const ms = (from: number, to = performance.now()) => Math.round(to - from);
    this.logger.log(
      `stored ${filename}: ${data.length} bytes, ${leaves.length} leaves; parse+chunk ${ms(started, chunked)} ms, ` +
        (onePass ? `search text+embeddings+insert ${ms(embedded, stored)} ms` : `search text+embeddings ${ms(chunked, embedded)} ms, insert ${ms(embedded, stored)} ms`) +
        (deferred ? ', index build left to a later bulk load' : bulk ? `, index ${ms(stored)} ms` : ''),
    );
    const document = await this.find(id);
    if (!document) throw new DocumentRemovedError(id);
    return { document, duplicate: false };
  }

  /**
   * A page of a collection's documents (unset: `default`'s), newest first,
   * after `cursor` (a `next_cursor` of an earlier page). The counts are the
   * document's stored figures: no chunk is read, so a page costs the same
   * whatever the size of the knowledge base.
   */
  async list(page: { limit?: number; cursor?: string; collectionId?: string } = {}): Promise<DocumentPage> {
    const limit = Math.min(Math.max(page.limit ?? DOCUMENT_PAGE_DEFAULT, 1), DOCUMENT_PAGE_MAX);
    const after = page.cursor ? decodeKeysetCursor(page.cursor) : null;
    const rows = await this.repository.page(page.collectionId ?? DEFAULT_COLLECTION_ID, limit + 1, after);
    const documents = rows.slice(0, limit);
    const last = documents[documents.length - 1];
    return {
      documents: documents.map(({ created_micros: _, ...document }) => document),
      next_cursor: rows.length > limit && last ? encodeKeysetCursor({ micros: last.created_micros, id: last.id }) : null,
    };
  }

  find(id: string): Promise<KnowledgeDocument | null> {
    return this.repository.find(id);
  }

  /**
   * Deletes a document of the collection (unset: `default`) and its chunks (in `within`, a transaction of the
   * caller's, if given); false when the collection has none of that id.
   */
  async remove(id: string, within?: EntityManager, collectionId = DEFAULT_COLLECTION_ID): Promise<boolean> {
    const remove = async (manager: EntityManager) => {
      const deleted = await this.repository.delete(manager, id, collectionId);
      if (deleted) await this.state.bumpVersion(manager);
      return deleted;
    };
    return within ? remove(within) : this.dataSource.transaction(remove);
  }

  /** Whether the collection (unset: `default`) has no document. */
  isEmpty(collectionId = DEFAULT_COLLECTION_ID): Promise<boolean> {
    return this.repository.isEmpty(collectionId);
  }

  /** The collection's stored document (unset: `default`'s) with exactly this content, if any. */
  findByContent(data: Buffer, collectionId = DEFAULT_COLLECTION_ID): Promise<KnowledgeDocument | null> {
    return this.findBySha(contentHash(data), collectionId);
  }

  private findBySha(sha256: string, collectionId: string): Promise<KnowledgeDocument | null> {
    return this.repository.findBySha(sha256, collectionId);
  }

  /**
   * Each leaf's search text and embedding, tokenizing it once for both, in
   * batches with a yield to the event loop after each. Parents get neither:
   * retrieval ranks leaves only (the GIN index and the dense legs are on
   * leaves), and a parent is reached through its children.
   */
  private async prepareLeaves(leaves: ChunkNode[], onProgress?: IngestProgress): Promise<Map<ChunkNode, PreparedLeaf>> {
    const prepared = new Map<ChunkNode, PreparedLeaf>();
    const batch = Math.max(1, this.embeddings.ingestBatchSize);
    for (let start = 0; start < leaves.length; start += batch) {
      const group = leaves.slice(start, start + batch);
      const tokens: string[][] = [];
      for (const leaf of group) {
        tokens.push(tokenize(leaf.text));
        if (tokens.length % TOKENIZE_BATCH === 0) await yieldToEventLoop();
      }
      const vectors = await this.embeddings.embedTokenized(
        group.map((leaf) => leaf.text),
        tokens,
      );
      group.forEach((leaf, i) => {
        const vector = vectors[i];
        prepared.set(leaf, { searchText: searchTextOfTokens(tokens[i]), embedding: vector ? Float32Array.from(vector) : null });
      });
      await onProgress?.('embedding', prepared.size, leaves.length);
      await yieldToEventLoop();
    }
    return prepared;
  }
}

function contentHash(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function flattenLeaves(nodes: ChunkNode[]): ChunkNode[] {
  return nodes.flatMap((node) => (node.children.length ? flattenLeaves(node.children) : [node]));
}

function countNodes(nodes: ChunkNode[]): number {
  return nodes.reduce((sum, node) => sum + 1 + countNodes(node.children), 0);
}
