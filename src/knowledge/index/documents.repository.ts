import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../../database/sql.js';

export interface KnowledgeDocument {
  id: string;
  collection_id: string;
  filename: string;
  /** Its first heading, else its file name without extension. */
  title: string;
  content_type: string;
  size_bytes: number;
  page_count: number | null;
  chunk_count: number;
  leaf_count: number;
  created_by: string;
  created_at: string;
}

/** What a document row is stored with besides its id. */
export interface NewDocument {
  collectionId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  pageCount: number | null;
  chunkCount: number;
  leafCount: number;
  createdBy: string;
}

/** A keyset position in the list: a document's creation time (microseconds since the epoch, as text) and id. */
export interface DocumentPosition {
  micros: string;
  id: string;
}

/**
 * A document's title: the outermost heading of its first top-level chunk under a heading (read through
 * idx_knowledge_chunks_document, in document order, stopping at the first), else its file name without extension.
 */
const DOCUMENT_TITLE = `COALESCE(
    (SELECT c.location->'heading_path'->>0 FROM knowledge_chunks c
      WHERE c.document_id = d.id AND c.level = 1 AND c.location->'heading_path'->>0 <> '' ORDER BY c.ordinal LIMIT 1),
    NULLIF(regexp_replace(d.filename, '\\.[^.]+$', ''), ''), d.filename)`;

const DOCUMENT_COLUMNS = `d.id, d.collection_id, d.filename, ${DOCUMENT_TITLE} AS title, d.content_type, d.size_bytes, d.page_count, d.chunk_count, d.leaf_count,
  d.created_by, to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

const DOCUMENT_SELECT = `SELECT ${DOCUMENT_COLUMNS} FROM knowledge_documents d`;

/** The documents of the knowledge base (`knowledge_documents`), each in a collection; a document's chunks go with it (ON DELETE CASCADE). */
export class DocumentsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, id: string, document: NewDocument): Promise<void> {
    await manager.query(
      `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, leaf_count, created_by, collection_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        id,
        document.filename,
        document.contentType,
        document.sizeBytes,
        document.sha256,
        document.pageCount,
        document.chunkCount,
        document.leafCount,
        document.createdBy,
        document.collectionId,
      ],
    );
  }

  /** Up to `limit` documents of the collection, newest first, after `after`; each with its position. */
  page(collectionId: string, limit: number, after: DocumentPosition | null): Promise<Array<KnowledgeDocument & { created_micros: string }>> {
    return sqlRows<KnowledgeDocument & { created_micros: string }>(
      this.dataSource,
      `SELECT ${DOCUMENT_COLUMNS}, (EXTRACT(EPOCH FROM d.created_at) * 1000000)::bigint::text AS created_micros
         FROM knowledge_documents d
        WHERE d.collection_id = $2
          ${after ? `AND (d.created_at, d.id) < (TIMESTAMPTZ 'epoch' + $3::bigint * INTERVAL '1 microsecond', $4::uuid)` : ''}
        ORDER BY d.created_at DESC, d.id DESC LIMIT $1`,
      after ? [limit, collectionId, after.micros, after.id] : [limit, collectionId],
    );
  }

  /**
   * The first heading of each named document (its collection and file name), when it has one: the
   * outermost heading of its first top-level chunk that lies under a heading, whatever chunk a search retrieved.
   */
  firstHeadings(documents: Array<{ collectionId: string; filename: string }>): Promise<Array<{ collection_id: string; filename: string; heading: string }>> {
    if (documents.length === 0) return Promise.resolve([]);
    return sqlRows(
      this.dataSource,
      `SELECT DISTINCT ON (d.id) d.collection_id::text AS collection_id, d.filename, c.location->'heading_path'->>0 AS heading
         FROM knowledge_documents d
         JOIN unnest($1::uuid[], $2::text[]) AS wanted(collection_id, filename) ON d.collection_id = wanted.collection_id AND d.filename = wanted.filename
         JOIN knowledge_chunks c ON c.document_id = d.id AND c.level = 1 AND jsonb_typeof(c.location->'heading_path') = 'array' AND c.location->'heading_path'->>0 <> ''
        ORDER BY d.id, c.ordinal`,
      [documents.map((document) => document.collectionId), documents.map((document) => document.filename)],
    );
  }

  async find(id: string): Promise<KnowledgeDocument | null> {
    const [row] = await sqlRows<KnowledgeDocument>(this.dataSource, `${DOCUMENT_SELECT} WHERE d.id = $1`, [id]);
    return row ?? null;
  }

  /** The collection's document with this content, if any (identical content is stored once per collection). */
  async findBySha(sha256: string, collectionId: string): Promise<KnowledgeDocument | null> {
    const [row] = await sqlRows<KnowledgeDocument>(this.dataSource, `${DOCUMENT_SELECT} WHERE d.collection_id = $2 AND d.content_sha256 = $1`, [sha256, collectionId]);
    return row ?? null;
  }

  /** Deletes the collection's document (and its chunks) in the caller's transaction; false when it has none of that id. */
  async delete(manager: EntityManager, id: string, collectionId: string): Promise<boolean> {
    const deleted = await sqlRows(manager, 'DELETE FROM knowledge_documents WHERE id = $1 AND collection_id = $2 RETURNING id', [id, collectionId]);
    return deleted.length > 0;
  }

  async isEmpty(collectionId: string): Promise<boolean> {
    const [row] = await sqlRows<{ any: boolean }>(this.dataSource, 'SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE collection_id = $1) AS any', [collectionId]);
    return !row.any;
  }
}
