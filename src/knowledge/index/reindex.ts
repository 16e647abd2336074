import { DataSource, EntityManager } from 'typeorm';
import { tokenize } from '../../common/text.js';
import { ChunksRepository } from './chunks.repository.js';
import { hasVectorColumn } from './dense/pgvector.repository.js';
import { EmbeddingProvider } from './embeddings.js';
import type { EmbeddingSpace } from './index-identity.js';
import { IndexStateRepository } from './index-state.repository.js';
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
  const state = new IndexStateRepository(dataSource);
  const chunks = new ChunksRepository(dataSource);
  const spaceId = await state.registerSpace(space);
  const vectorColumn = await hasVectorColumn(dataSource);
  const total = await chunks.countLeavesOutsideSpace(spaceId);
  let done = 0;
  onProgress(done, total);
  await reindexLeaves(chunks, dataSource, embeddings, spaceId, vectorColumn, (batch) => onProgress((done += batch), total));
  // Last, with the knowledge base's state row locked (an ingest takes it before its commit, so none commits meanwhile):
  // leaves an ingest committed during the pass are re-indexed too, and the space moves.
  await dataSource.transaction(async (manager) => {
    await state.lockSpace(manager);
    done += await reindexLeaves(chunks, manager, embeddings, spaceId, vectorColumn, () => undefined);
    await state.moveToSpace(manager, spaceId);
  });
  onProgress(done, Math.max(total, done));
  return { spaceId, reindexed: done };
}

/** Re-indexes, batch by batch, the leaves not yet in `spaceId`; returns how many (`onBatch` hears each batch's size). */
async function reindexLeaves(
  chunks: ChunksRepository,
  db: DataSource | EntityManager,
  embeddings: EmbeddingProvider,
  spaceId: number,
  vectorColumn: boolean,
  onBatch: (size: number) => void,
): Promise<number> {
  let count = 0;
  for (let after = '0'; ;) {
    const rows = await chunks.leavesOutsideSpace(db, spaceId, after, REINDEX_BATCH);
    if (rows.length === 0) return count;
    const tokens = rows.map((row) => tokenize(row.text));
    const vectors = (
      await embeddings.embedTokenized(
        rows.map((row) => row.text),
        tokens,
      )
    ).map((v) => Float32Array.from(v));
    await chunks.reindexLeaves(
      db,
      rows.map((row, i) => ({ id: row.id, searchText: searchTextOfTokens(tokens[i]), embedding: vectors[i] })),
      spaceId,
      vectorColumn,
    );
    count += rows.length;
    after = rows[rows.length - 1].id;
    onBatch(rows.length);
  }
}
