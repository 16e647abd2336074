import { DataSource } from 'typeorm';
import { isUniqueViolation, pgErrorCode, sqlRows } from '../../database/sql.js';
import { floatsOf } from './memory-dense-index.js';

/** pgvector's HNSW index takes vectors of at most this many dimensions. */
export const HNSW_MAX_DIMENSIONS = 2000;

const BACKFILL_BATCH = 1000;

/** A vector as pgvector's text input: `[0.1,0.2,...]`. */
export function vectorLiteral(vector: ArrayLike<number>): string {
  return `[${Array.prototype.join.call(vector, ',')}]`;
}

/** Whether the pgvector migration gave this database its `embedding_vector` column. */
export async function hasVectorColumn(dataSource: DataSource): Promise<boolean> {
  const [row] = await sqlRows<{ present: boolean }>(
    dataSource,
    `SELECT EXISTS (
       SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
     ) AS present`,
  );
  return row.present;
}

/**
 * The dense leg in PostgreSQL with pgvector: cosine distance over the leaf
 * embeddings, served by an HNSW index on the configured embedding size.
 * The index is a partial expression index (`embedding_vector::vector(N)` for
 * rows of N dimensions), since the column's size is not fixed by the schema;
 * it is created here because N is configuration, and kept up to date by
 * PostgreSQL on every insert and delete.
 */
export class PgvectorStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly dimensions: number,
    private readonly efSearch: number,
  ) {}

  get indexed(): boolean {
    return this.dimensions <= HNSW_MAX_DIMENSIONS;
  }

  get indexName(): string {
    return `idx_knowledge_chunks_hnsw_${this.dimensions}`;
  }

  /** Creates the HNSW index when missing; safe when several instances start at once. */
  async ensureIndex(): Promise<void> {
    if (!this.indexed) return;
    try {
      await this.dataSource.query(
        `CREATE INDEX IF NOT EXISTS "${this.indexName}" ON knowledge_chunks
           USING hnsw ((embedding_vector::vector(${this.dimensions})) vector_cosine_ops)
           WHERE is_leaf AND vector_dims(embedding_vector) = ${this.dimensions}`,
      );
    } catch (error) {
      // Another instance created it at the same moment (a catalog unique violation, or 42P07 duplicate_table).
      if (!isUniqueViolation(error) && pgErrorCode(error) !== '42P07') throw error;
    }
  }

  /** Fills `embedding_vector` for leaves stored before the column existed; returns how many. */
  async backfill(): Promise<number> {
    let filled = 0;
    for (;;) {
      const rows = await sqlRows<{ id: string; embedding: Buffer }>(
        this.dataSource,
        `SELECT id, embedding FROM knowledge_chunks
          WHERE is_leaf AND embedding_vector IS NULL AND octet_length(embedding) = $1
          ORDER BY id LIMIT ${BACKFILL_BATCH}`,
        [this.dimensions * Float32Array.BYTES_PER_ELEMENT],
      );
      if (rows.length === 0) return filled;
      await this.dataSource.query(
        `UPDATE knowledge_chunks c SET embedding_vector = v.vector::vector
           FROM unnest($1::bigint[], $2::text[]) AS v(id, vector) WHERE c.id = v.id`,
        [rows.map((row) => row.id), rows.map((row) => vectorLiteral(floatsOf(row.embedding, this.dimensions)))],
      );
      filled += rows.length;
    }
  }

  /** Leaf ids by cosine similarity to `query`, best first; only positive similarities, as the in-memory leg. */
  async rank(query: Float32Array, limit: number): Promise<string[]> {
    if (query.length !== this.dimensions) return [];
    const n = this.dimensions;
    return this.dataSource.transaction(async (manager) => {
      // HNSW yields at most ef_search rows per scan: make room for `limit`.
      await manager.query(`SELECT set_config('hnsw.ef_search', $1, true)`, [String(Math.max(this.efSearch, limit))]);
      const rows = await sqlRows<{ id: string; distance: number }>(
        manager,
        `SELECT id, embedding_vector::vector(${n}) <=> $1::vector(${n}) AS distance
           FROM knowledge_chunks
          WHERE is_leaf AND vector_dims(embedding_vector) = ${n}
          ORDER BY embedding_vector::vector(${n}) <=> $1::vector(${n})
          LIMIT $2`,
        [vectorLiteral(query), limit],
      );
      return rows.filter((row) => row.distance < 1).map((row) => String(row.id));
    });
  }
}
