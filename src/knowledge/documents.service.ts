import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isUniqueViolation, sqlRows } from '../database/sql.js';
import { buildChunkTree, ChunkNode } from './chunker.js';
import { parseDocument } from './document-parser.js';
import { DenseRecall } from './dense/dense-recall.service.js';
import { vectorLiteral } from './dense/pgvector-store.js';
import { EmbeddingProvider } from './embeddings.js';
import { searchDocumentText } from './search-text.js';

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

/** Documents of the knowledge base: parsed, split into a chunk hierarchy, embedded, stored in one transaction. */
@Injectable()
export class DocumentsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    private readonly dense: DenseRecall,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores a document; identical content already stored is returned as it is (`duplicate: true`). */
  async ingest(filename: string, data: Buffer, createdBy: string): Promise<IngestResult> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const existing = await this.findBySha(sha256);
    if (existing) return { document: existing, duplicate: true };

    const parsed = await parseDocument(filename, data);
    const { chunkSizes, chunkOverlap } = this.config.knowledge;
    const tree = buildChunkTree(parsed.pages, chunkSizes, chunkOverlap);
    const leaves = flattenLeaves(tree);
    const vectors = leaves.length ? await this.embeddings.embed(leaves.map((leaf) => leaf.text)) : [];
    const embeddingOf = new Map(leaves.map((leaf, i) => [leaf, vectors[i]]));
    const id = randomUUID();
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [id, filename.slice(0, 255), parsed.contentType, data.length, sha256, parsed.pageCount, countNodes(tree), createdBy],
        );
        await this.insertLevel(manager, id, tree.map((node) => ({ node, parentId: null })), chunkSizes.length, embeddingOf);
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

  /** Inserts one level of the tree in one statement, then its children with their parents' new ids. */
  private async insertLevel(
    manager: EntityManager,
    documentId: string,
    items: Array<{ node: ChunkNode; parentId: string | null }>,
    leafLevel: number,
    embeddingOf: Map<ChunkNode, number[]>,
  ): Promise<void> {
    if (items.length === 0) return;
    const withVectorColumn = this.dense.writesVectorColumn;
    const floats = items.map((item) => {
      const vector = embeddingOf.get(item.node);
      return vector ? Float32Array.from(vector) : null;
    });
    const rows = await sqlRows<{ id: string; ordinal: number }>(
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
        items.map((_, i) => i),
        items.map((item) => item.node.page),
        items.map((item) => item.node.text),
        items.map((item) => searchDocumentText(item.node.text)),
        floats.map((vector) => (vector ? Buffer.from(vector.buffer) : null)),
        // The same float32 values as the bytes, so both dense backends rank alike.
        floats.map((vector) => (vector && withVectorColumn ? vectorLiteral(vector) : null)),
      ],
    );
    const idOf = new Map(rows.map((row) => [Number(row.ordinal), row.id]));
    const children = items.flatMap((item, i) => item.node.children.map((node) => ({ node, parentId: idOf.get(i)! })));
    await this.insertLevel(manager, documentId, children, leafLevel, embeddingOf);
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
