import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../../database/sql.js';
import type { ChunkLocation } from '../ingest/extraction-budget.js';
import type { RetrievalScope } from '../collections/retrieval-scope.js';
import { vectorLiteral } from './dense/pgvector.repository.js';
import { inScope, scopeParams } from './scope-filter.js';

/** Most full-text matches ranked per query (see rankFullText). */
export const FULL_TEXT_CANDIDATE_CAP = 1000;

/** One row of a chunk INSERT: a node of the chunk tree with its parent's id, and a leaf's search text and embedding. */
export interface ChunkRow {
  parentId: string | null;
  level: number;
  isLeaf: boolean;
  ordinal: number;
  page: number | null;
  location: ChunkLocation | null;
  text: string;
  searchText: string;
  embedding: Float32Array | null;
}

/** A chunk as recall reports it, with its document's name and its collection. */
export interface ChunkDetail {
  id: string;
  collection_id: string;
  text: string;
  page: number | null;
  location: ChunkLocation | null;
  source: string;
  parent_id: string | null;
  level: number;
}

/** A chunk as its source reads: with its document, and whether it is the one asked for. */
export interface SourceChunkRow {
  id: string;
  collection_id: string;
  document_id: string;
  filename: string;
  text: string;
  page: number | null;
  location: ChunkLocation | null;
  cited: boolean;
}

export interface ParentInfo {
  id: string;
  collection_id: string;
  text: string;
  page: number | null;
  location: ChunkLocation | null;
  level: number;
  children: number;
}

/**
 * The chunks of the knowledge base (`knowledge_chunks`): their rows, full-text
 * ranking, and the leaves' search text and embeddings. Methods that take an
 * EntityManager run in the caller's transaction. The pgvector column and its
 * indexes are PgvectorStore's.
 */
export class ChunksRepository {
  constructor(readonly dataSource: DataSource) {}

  /**
   * One multi-row INSERT of `rows`; returns each row's new id with its
   * ordinal. `collectionId` is the document's (a foreign key holds them
   * equal), denormalized so that recall filters leaves without a join. `withVectorColumn`: pgvector's column is written too, with the
   * same float32 values as the bytes, so both dense backends rank alike.
   */
  insert(
    manager: EntityManager,
    documentId: string,
    rows: ChunkRow[],
    target: { collectionId: string; spaceId: number; denseEpoch: number; withVectorColumn: boolean },
  ): Promise<Array<{ id: string; ordinal: number }>> {
    const { withVectorColumn } = target;
    return sqlRows<{ id: string; ordinal: number }>(
      manager,
      `INSERT INTO knowledge_chunks (document_id, parent_id, level, is_leaf, ordinal, page, location, text, search_vector, embedding,
                                   space_id, dense_epoch, collection_id ${withVectorColumn ? ', embedding_vector' : ''})
     SELECT $1, t.parent_id, t.level, t.is_leaf, t.ordinal, t.page, t.location::jsonb, t.text, to_tsvector('simple', t.search_text), t.embedding,
            CASE WHEN t.is_leaf THEN $12::smallint END, $13::int, $14::uuid ${withVectorColumn ? ', t.vector::vector' : ''}
       FROM unnest($2::bigint[], $3::smallint[], $4::boolean[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[])
         AS t(parent_id, level, is_leaf, ordinal, page, location, text, search_text, embedding, vector)
     RETURNING id, ordinal`,
      [
        documentId,
        rows.map((row) => row.parentId),
        rows.map((row) => row.level),
        rows.map((row) => row.isLeaf),
        rows.map((row) => row.ordinal),
        rows.map((row) => row.page),
        rows.map((row) => (row.location ? JSON.stringify(row.location) : null)),
        rows.map((row) => row.text),
        rows.map((row) => row.searchText),
        rows.map((row) => (row.embedding ? Buffer.from(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength) : null)),
        rows.map((row) => (row.embedding && withVectorColumn ? vectorLiteral(row.embedding) : null)),
        target.spaceId,
        target.denseEpoch,
        target.collectionId,
      ],
    );
  }

  /** Runs `work` in a transaction whose statements PostgreSQL cancels after `timeoutMs` (57014). */
  withStatementTimeout<T>(timeoutMs: number, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
      return work(manager);
    });
  }

  /**
   * Leaf ids of the scope's collections matching `tsquery`, by ts_rank, best
   * first. The scope is a condition of the match itself, so the cap and the
   * limit count readable leaves only.
   */
  async rankFullText(manager: EntityManager, tsquery: string, limit: number, scope: RetrievalScope): Promise<string[]> {
    if (scope.empty) return [];
    // Ranking reads every match's tsvector; capping the matches bounds the cost of very common terms
    // (the ranking is then over the first FULL_TEXT_CANDIDATE_CAP matches the GIN index yields).
    const rows = await sqlRows<{ id: string }>(
      manager,
      `WITH matches AS (
         SELECT id, search_vector FROM knowledge_chunks, to_tsquery('simple', $1) q
          WHERE is_leaf AND search_vector @@ q ${inScope(scope, '$3')}
          LIMIT ${FULL_TEXT_CANDIDATE_CAP}
       )
       SELECT id FROM matches, to_tsquery('simple', $1) q
        ORDER BY ts_rank(search_vector, q) DESC, id
        LIMIT $2`,
      [tsquery, limit, ...scopeParams(scope)],
    );
    return rows.map((row) => String(row.id));
  }

  /** The chunks `ids` of the scope's collections (in no order), with their document's name as `source`. */
  async details(ids: string[], scope: RetrievalScope): Promise<ChunkDetail[]> {
    if (scope.empty) return [];
    return sqlRows<ChunkDetail>(this.dataSource, detailsSql(scope, ''), [ids, ...scopeParams(scope)]);
  }

  /**
   * The same, with the knowledge base's version in the same snapshot (null
   * when no row was found): what a read replica is checked by.
   */
  async versionedDetails(ids: string[], scope: RetrievalScope): Promise<{ version: string | null; value: ChunkDetail[] }> {
    if (scope.empty) return { version: null, value: [] };
    const rows = await sqlRows<ChunkDetail & { index_version?: string }>(
      this.dataSource,
      detailsSql(scope, ', (SELECT version::text FROM knowledge_index_state WHERE id = 1) AS index_version'),
      [ids, ...scopeParams(scope)],
    );
    const version = rows[0]?.index_version ?? null;
    for (const row of rows) delete row.index_version;
    return { version, value: rows };
  }

  /** The knowledge base's version as `manager`'s transaction sees it (knowledge_index_state; IndexStateRepository.version on the primary). */
  async indexVersion(manager: EntityManager): Promise<string> {
    const [{ version }] = await sqlRows<{ version: string }>(manager, 'SELECT version::text FROM knowledge_index_state WHERE id = 1');
    return version;
  }

  /** The chunks `ids` of the scope's collections with the number of children each has. */
  parents(ids: string[], scope: RetrievalScope): Promise<ParentInfo[]> {
    if (scope.empty) return Promise.resolve([]);
    return sqlRows<ParentInfo>(
      this.dataSource,
      `SELECT p.id::text AS id, p.collection_id::text AS collection_id, p.text, p.page, p.location, p.level,
              (SELECT count(*)::int FROM knowledge_chunks s WHERE s.parent_id = p.id) AS children
         FROM knowledge_chunks p WHERE p.id = ANY($1::bigint[]) ${inScope(scope, '$2', 'p.collection_id')}`,
      [ids, ...scopeParams(scope)],
    );
  }

  /**
   * The chunk with the chunks beside it: those of its document and level
   * whose position is within `around` of its own, in document order (the
   * chunk itself among them, `cited`). Empty when there is no such chunk.
   */
  withNeighbours(id: string, around: number): Promise<SourceChunkRow[]> {
    return sqlRows<SourceChunkRow>(
      this.dataSource,
      `WITH target AS (SELECT id, document_id, level, ordinal FROM knowledge_chunks WHERE id = $1::bigint)
       SELECT c.id::text AS id, c.collection_id::text AS collection_id, c.document_id::text AS document_id, d.filename,
              c.text, c.page, c.location, (c.id = t.id) AS cited
         FROM target t
         JOIN knowledge_chunks c ON c.document_id = t.document_id AND c.level = t.level AND c.ordinal BETWEEN t.ordinal - $2::int AND t.ordinal + $2::int
         JOIN knowledge_documents d ON d.id = c.document_id
        ORDER BY c.ordinal`,
      [id, around],
    );
  }

  async leafCount(): Promise<number> {
    const [{ leaves }] = await this.dataSource.query('SELECT count(*)::int AS leaves FROM knowledge_chunks WHERE is_leaf');
    return Number(leaves);
  }

  /** Records leaves stored before leaves recorded their space as of `spaceId`; returns how many. */
  async recordUnspacedLeaves(manager: EntityManager, spaceId: number): Promise<number> {
    const rows = await sqlRows(manager, 'UPDATE knowledge_chunks SET space_id = $1 WHERE is_leaf AND space_id IS NULL RETURNING 1', [spaceId]);
    return rows.length;
  }

  async countLeavesOutsideSpace(spaceId: number): Promise<number> {
    const [{ total }] = await sqlRows<{ total: number }>(this.dataSource, 'SELECT count(*)::int AS total FROM knowledge_chunks WHERE is_leaf AND space_id IS DISTINCT FROM $1', [
      spaceId,
    ]);
    return total;
  }

  /** The next `batch` leaves not in `spaceId` after the id `after`, in id order. */
  leavesOutsideSpace(db: DataSource | EntityManager, spaceId: number, after: string, batch: number): Promise<Array<{ id: string; text: string }>> {
    return sqlRows<{ id: string; text: string }>(
      db,
      `SELECT id::text, text FROM knowledge_chunks WHERE is_leaf AND space_id IS DISTINCT FROM $1 AND id > $2 ORDER BY id LIMIT ${batch}`,
      [spaceId, after],
    );
  }

  /** Writes the leaves' new search text and embeddings, recorded in `spaceId`. */
  async reindexLeaves(
    db: DataSource | EntityManager,
    leaves: Array<{ id: string; searchText: string; embedding: Float32Array }>,
    spaceId: number,
    vectorColumn: boolean,
  ): Promise<void> {
    await db.query(
      `UPDATE knowledge_chunks c
          SET search_vector = to_tsvector('simple', v.search_text), embedding = v.embedding, space_id = $5
              ${vectorColumn ? ', embedding_vector = v.vector::vector' : ''}
         FROM unnest($1::bigint[], $2::text[], $3::bytea[], $4::text[]) AS v(id, search_text, embedding, vector)
        WHERE c.id = v.id`,
      [
        leaves.map((leaf) => leaf.id),
        leaves.map((leaf) => leaf.searchText),
        leaves.map(({ embedding: v }) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
        leaves.map(({ embedding: v }) => (vectorColumn ? vectorLiteral(v) : null)),
        spaceId,
      ],
    );
  }

  /** The number of chunks that pass `usableLeaves` (an SQL condition on knowledge_chunks made by the caller, no input of a user's). */
  async countWhere(usableLeaves: string): Promise<number> {
    const [{ count }] = await sqlRows<{ count: number }>(this.dataSource, `SELECT count(*)::int AS count FROM knowledge_chunks WHERE ${usableLeaves}`);
    return count;
  }

  /**
   * The next `batch` chunks after `afterId` in primary-key order, with the
   * embedding of those that pass `usableLeaves` (null for the others). The
   * condition is in the select list, not the WHERE clause: there PostgreSQL
   * expected few matches and scanned (and sorted) the whole table for every
   * page, seconds each at a million leaves.
   */
  embeddingPage(usableLeaves: string, afterId: string, batch: number): Promise<Array<{ id: string; collection_id: string; embedding: Buffer | null }>> {
    return sqlRows<{ id: string; collection_id: string; embedding: Buffer | null }>(
      this.dataSource,
      // Ordered by the bigint column, not by the text it is selected as: the pages follow on, and the last id is the highest.
      `SELECT id::text, collection_id::text, CASE WHEN ${usableLeaves} THEN embedding END AS embedding FROM knowledge_chunks
        WHERE id > $1 ORDER BY knowledge_chunks.id LIMIT ${batch}`,
      [afterId],
    );
  }
}

/** The chunks $1 of the scope's collections with their document's name, and `extra` columns. */
function detailsSql(scope: RetrievalScope, extra: string): string {
  return `SELECT c.id, c.collection_id::text AS collection_id, c.text, c.page, c.location, c.parent_id, c.level, d.filename AS source${extra}
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE c.id = ANY($1::bigint[]) ${inScope(scope, '$2', 'c.collection_id')}`;
}
