import { DataSource, EntityManager } from 'typeorm';
import { tokenize } from '../../common/text.js';
import { sqlRows } from '../../database/sql.js';
import { vectorLiteral, hasVectorColumn } from './dense/pgvector-store.js';
import { EmbeddingProvider } from './embeddings.js';
import { EmbeddingSpace, lockIndexSpace, registerSpace } from './index-identity.js';
import { searchTextOfTokens } from './search-text.js';

/** Leaves re-indexed per statement. */
const REINDEX_BATCH = 256;

/**
 * Moves the knowledge base into `space` (`npm run knowledge:reindex`): every
 * leaf's search text and embedding are made again from its text with the
 * configured tokenizer and embeddings, and recorded in the new space; then
 * the knowledge base's space moves. Idempotent: an interrupted run goes on
 * where it stopped. Instances in the old space refuse to start afterwards
 * (run it with them stopped); the dense index for a new size is built at the
 * next start.
 */
export async function reindexKnowledge(
  dataSource: DataSource,
  embeddings: EmbeddingProvider,
  space: EmbeddingSpace,
  onProgress: (done: number, total: number) => void = () => undefined,
): Promise<{ spaceId: number; reindexed: number }> {
  const spaceId = await registerSpace(dataSource, space);
  const vectorColumn = await hasVectorColumn(dataSource);
  const [{ total }] = await sqlRows<{ total: number }>(
    dataSource,
    'SELECT count(*)::int AS total FROM knowledge_chunks WHERE is_leaf AND space_id IS DISTINCT FROM $1',
    [spaceId],
  );
  let done = 0;
  onProgress(done, total);
  await reindexLeaves(dataSource, embeddings, spaceId, vectorColumn, (batch) => onProgress((done += batch), total));
  // Last, with the knowledge base's state row locked (an ingest takes it before its commit, so none commits meanwhile):
  // leaves an ingest committed during the pass are re-indexed too, and the space moves.
  await dataSource.transaction(async (manager) => {
    await lockIndexSpace(manager);
    done += await reindexLeaves(manager, embeddings, spaceId, vectorColumn, () => undefined);
    await manager.query('UPDATE knowledge_index_state SET space_id = $1, version = version + 1 WHERE id = 1', [spaceId]);
  });
  onProgress(done, Math.max(total, done));
  return { spaceId, reindexed: done };
}

/** Re-indexes, batch by batch, the leaves not yet in `spaceId`; returns how many (`onBatch` hears each batch's size). */
async function reindexLeaves(
  db: DataSource | EntityManager,
  embeddings: EmbeddingProvider,
  spaceId: number,
  vectorColumn: boolean,
  onBatch: (size: number) => void,
): Promise<number> {
  let count = 0;
  for (let after = '0'; ; ) {
    const rows = await sqlRows<{ id: string; text: string }>(
      db,
      `SELECT id::text, text FROM knowledge_chunks WHERE is_leaf AND space_id IS DISTINCT FROM $1 AND id > $2 ORDER BY id LIMIT ${REINDEX_BATCH}`,
      [spaceId, after],
    );
    if (rows.length === 0) return count;
    const tokens = rows.map((row) => tokenize(row.text));
    const vectors = (await embeddings.embedTokenized(rows.map((row) => row.text), tokens)).map((v) => Float32Array.from(v));
    await db.query(
      `UPDATE knowledge_chunks c
          SET search_vector = to_tsvector('simple', v.search_text), embedding = v.embedding, space_id = $5
              ${vectorColumn ? ', embedding_vector = v.vector::vector' : ''}
         FROM unnest($1::bigint[], $2::text[], $3::bytea[], $4::text[]) AS v(id, search_text, embedding, vector)
        WHERE c.id = v.id`,
      [
        rows.map((row) => row.id),
        tokens.map((t) => searchTextOfTokens(t)),
        vectors.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
        vectors.map((v) => (vectorColumn ? vectorLiteral(v) : null)),
        spaceId,
      ],
    );
    count += rows.length;
    after = rows[rows.length - 1].id;
    onBatch(rows.length);
  }
}
