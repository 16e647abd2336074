import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { tokenize } from '../common/text.js';
import { isUniqueViolation, sqlRows } from '../database/sql.js';
import { buildChunkTreeIncrementally, ChunkNode, yieldToEventLoop } from './chunker.js';
import { documentNameProblem, InvalidDocumentNameError } from './document-name.js';
import { parseDocument } from './document-parser.js';
import { DenseRecall } from './dense/dense-recall.service.js';
import { vectorLiteral } from './dense/pgvector-store.js';
import { EmbeddingProvider } from './embeddings.js';
import { searchTextOfTokens } from './search-text.js';

/** Leaves tokenized (for their search text and embedding) between two yields to the event loop: a few milliseconds of work. */
export const TOKENIZE_BATCH = 32;

/** Chunk rows per INSERT statement. */
export const INSERT_BATCH_ROWS = 500;

/** What a leaf is stored with besides its text. */
interface PreparedLeaf {
  searchText: string;
  embedding: Float32Array | null;
}

export interface KnowledgeDocument {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  page_count: number | null;
  chunk_count: number;
  leaf_count: number;
  created_by: string;
  created_at: string;
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

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    private readonly dense: DenseRecall,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Stores a document; identical content already stored is returned as it is (`duplicate: true`).
   * Throws InvalidDocumentNameError for a name that cannot be stored, and the parser's errors for unreadable content.
   */
  async ingest(filename: string, data: Buffer, createdBy: string): Promise<IngestResult> {
    const nameProblem = documentNameProblem(filename);
    if (nameProblem) throw new InvalidDocumentNameError(nameProblem);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const existing = await this.findBySha(sha256);
    if (existing) return { document: existing, duplicate: true };

    const started = performance.now();
    const parsed = await parseDocument(filename, data);
    const { chunkSizes, chunkOverlap } = this.config.knowledge;
    const tree = await buildChunkTreeIncrementally(parsed.pages, chunkSizes, chunkOverlap);
    const chunked = performance.now();
    const leaves = flattenLeaves(tree);
    const prepared = await this.prepareLeaves(leaves);
    const embedded = performance.now();
    const id = randomUUID();
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [id, filename, parsed.contentType, data.length, sha256, parsed.pageCount, countNodes(tree), createdBy],
        );
        await this.insertTree(manager, id, tree, chunkSizes.length, prepared);
        await manager.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
      });
    } catch (error) {
      // The same content uploaded at the same moment by someone else.
      if (isUniqueViolation(error)) {
        const winner = await this.findBySha(sha256);
        if (winner) return { document: winner, duplicate: true };
      }
      throw error;
    }
    const ms = (from: number, to = performance.now()) => Math.round(to - from);
    this.logger.log(
      `stored ${filename}: ${data.length} bytes, ${leaves.length} leaves; parse+chunk ${ms(started, chunked)} ms, ` +
        `search text+embeddings ${ms(chunked, embedded)} ms, insert ${ms(embedded)} ms`,
    );
    return { document: (await this.find(id))!, duplicate: false };
  }

  async list(): Promise<KnowledgeDocument[]> {
    return sqlRows<KnowledgeDocument>(this.dataSource, `${DOCUMENT_SELECT} ORDER BY d.created_at DESC, d.id`);
  }

  async find(id: string): Promise<KnowledgeDocument | null> {
    const [row] = await sqlRows<KnowledgeDocument>(this.dataSource, `${DOCUMENT_SELECT} WHERE d.id = $1`, [id]);
    return row ?? null;
  }

  /** Deletes a document and its chunks; false when there was none. */
  async remove(id: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const deleted = await sqlRows(manager, 'DELETE FROM knowledge_documents WHERE id = $1 RETURNING id', [id]);
      if (deleted.length) await manager.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
      return deleted.length > 0;
    });
  }

  async isEmpty(): Promise<boolean> {
    const [row] = await sqlRows<{ any: boolean }>(this.dataSource, 'SELECT EXISTS (SELECT 1 FROM knowledge_documents) AS any');
    return !row.any;
  }

  private findBySha(sha256: string): Promise<KnowledgeDocument | null> {
    return sqlRows<KnowledgeDocument>(this.dataSource, `${DOCUMENT_SELECT} WHERE d.content_sha256 = $1`, [sha256]).then(
      ([row]) => row ?? null,
    );
  }

  /**
   * Each leaf's search text and embedding, tokenizing it once for both, in
   * batches with a yield to the event loop after each. Parents get neither:
   * retrieval ranks leaves only (the GIN index and the dense legs are on
   * leaves), and a parent is reached through its children.
   */
  private async prepareLeaves(leaves: ChunkNode[]): Promise<Map<ChunkNode, PreparedLeaf>> {
    const prepared = new Map<ChunkNode, PreparedLeaf>();
    const batch = Math.max(1, this.embeddings.ingestBatchSize);
    for (let start = 0; start < leaves.length; start += batch) {
      const group = leaves.slice(start, start + batch);
      const tokens: string[][] = [];
      for (const leaf of group) {
        tokens.push(tokenize(leaf.text));
        if (tokens.length % TOKENIZE_BATCH === 0) await yieldToEventLoop();
      }
      const vectors = await this.embeddings.embedTokenized(group.map((leaf) => leaf.text), tokens);
      group.forEach((leaf, i) => {
        const vector = vectors[i];
        prepared.set(leaf, { searchText: searchTextOfTokens(tokens[i]), embedding: vector ? Float32Array.from(vector) : null });
      });
      await yieldToEventLoop();
    }
    return prepared;
  }

  /** Inserts the tree level by level, at most INSERT_BATCH_ROWS rows per statement, each child with its parent's new id. */
  private async insertTree(
    manager: EntityManager,
    documentId: string,
    tree: ChunkNode[],
    leafLevel: number,
    prepared: Map<ChunkNode, PreparedLeaf>,
  ): Promise<void> {
    let level: Array<{ node: ChunkNode; parentId: string | null }> = tree.map((node) => ({ node, parentId: null }));
    while (level.length > 0) {
      const ids: string[] = new Array(level.length);
      for (let start = 0; start < level.length; start += INSERT_BATCH_ROWS) {
        const rows = await this.insertRows(manager, documentId, level.slice(start, start + INSERT_BATCH_ROWS), start, leafLevel, prepared);
        for (const row of rows) ids[Number(row.ordinal)] = String(row.id);
      }
      level = level.flatMap((item, i) => item.node.children.map((node) => ({ node, parentId: ids[i] })));
    }
  }

  /** One INSERT of consecutive nodes of a level; `first` is the ordinal (position in the level) of the first. */
  private async insertRows(
    manager: EntityManager,
    documentId: string,
    items: Array<{ node: ChunkNode; parentId: string | null }>,
    first: number,
    leafLevel: number,
    prepared: Map<ChunkNode, PreparedLeaf>,
  ): Promise<Array<{ id: string; ordinal: number }>> {
    const withVectorColumn = this.dense.writesVectorColumn;
    const leaves = items.map((item) => prepared.get(item.node));
    return sqlRows<{ id: string; ordinal: number }>(
      manager,
      `INSERT INTO knowledge_chunks (document_id, parent_id, level, is_leaf, ordinal, page, text, search_vector, embedding
                                     ${withVectorColumn ? ', embedding_vector' : ''})
       SELECT $1, t.parent_id, t.level, t.is_leaf, t.ordinal, t.page, t.text, to_tsvector('simple', t.search_text), t.embedding
              ${withVectorColumn ? ', t.vector::vector' : ''}
         FROM unnest($2::bigint[], $3::smallint[], $4::boolean[], $5::int[], $6::int[], $7::text[], $8::text[], $9::bytea[], $10::text[])
           AS t(parent_id, level, is_leaf, ordinal, page, text, search_text, embedding, vector)
       RETURNING id, ordinal`,
      [
        documentId,
        items.map((item) => item.parentId),
        items.map((item) => item.node.level),
        items.map((item) => item.node.level === leafLevel),
        items.map((_, i) => first + i),
        items.map((item) => item.node.page),
        items.map((item) => item.node.text),
        leaves.map((leaf) => leaf?.searchText ?? ''),
        leaves.map((leaf) => (leaf?.embedding ? Buffer.from(leaf.embedding.buffer, leaf.embedding.byteOffset, leaf.embedding.byteLength) : null)),
        // The same float32 values as the bytes, so both dense backends rank alike.
        leaves.map((leaf) => (leaf?.embedding && withVectorColumn ? vectorLiteral(leaf.embedding) : null)),
      ],
    );
  }
}

const DOCUMENT_SELECT = `
  SELECT d.id, d.filename, d.content_type, d.size_bytes, d.page_count, d.chunk_count,
         (SELECT count(*)::int FROM knowledge_chunks c WHERE c.document_id = d.id AND c.is_leaf) AS leaf_count,
         d.created_by, to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
    FROM knowledge_documents d`;

function flattenLeaves(nodes: ChunkNode[]): ChunkNode[] {
  return nodes.flatMap((node) => (node.children.length ? flattenLeaves(node.children) : [node]));
}

function countNodes(nodes: ChunkNode[]): number {
  return nodes.reduce((sum, node) => sum + 1 + countNodes(node.children), 0);
}
