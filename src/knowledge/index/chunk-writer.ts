import { EntityManager } from 'typeorm';
import { sqlRows } from '../../database/sql.js';
import type { ChunkNode } from '../ingest/chunker.js';
import { vectorLiteral } from './dense/pgvector-store.js';

/** Chunk rows per INSERT statement. */
export const INSERT_BATCH_ROWS = 500;

/** What a leaf is stored with besides its text. */
export interface PreparedLeaf {
  searchText: string;
  embedding: Float32Array | null;
}

/**
 * The search text and embedding of the leaves among `nodes` (consecutive
 * nodes of one level); nodes it leaves out are written without either.
 */
export type LeafPreparer = (nodes: ChunkNode[]) => Promise<Map<ChunkNode, PreparedLeaf>>;

/** Where a document's leaves go: their embedding space, their dense epoch, and whether pgvector's column is written too. */
export interface ChunkWriteTarget {
  spaceId: number;
  denseEpoch: number;
  withVectorColumn: boolean;
}

/**
 * Inserts a document's chunk tree level by level, at most INSERT_BATCH_ROWS
 * rows per multi-row statement, each child with its parent's new id;
 * `onRows` hears the running count of rows written. Each batch's leaves are
 * prepared (`prepare`) while the batch before is being written, so that
 * preparing on this process's CPU and writing on the database's overlap.
 */
export async function insertChunkTree(
  manager: EntityManager,
  documentId: string,
  tree: ChunkNode[],
  leafLevel: number,
  prepare: LeafPreparer,
  target: ChunkWriteTarget,
  onRows?: (written: number) => void | Promise<void>,
): Promise<void> {
  let level: Array<{ node: ChunkNode; parentId: string | null }> = tree.map((node) => ({ node, parentId: null }));
  let written = 0;
  while (level.length > 0) {
    const ids: string[] = new Array(level.length);
    const prepareBatch = (start: number) => {
      const leaves = level.slice(start, start + INSERT_BATCH_ROWS).flatMap((item) => (item.node.level === leafLevel ? [item.node] : []));
      const preparing = leaves.length ? prepare(leaves) : Promise.resolve(new Map<ChunkNode, PreparedLeaf>());
      // Awaited below; a failed insert before it must not leave it rejected unheard.
      preparing.catch(() => undefined);
      return preparing;
    };
    let next = prepareBatch(0);
    for (let start = 0; start < level.length; start += INSERT_BATCH_ROWS) {
      const prepared = await next;
      if (start + INSERT_BATCH_ROWS < level.length) next = prepareBatch(start + INSERT_BATCH_ROWS);
      const batch = level.slice(start, start + INSERT_BATCH_ROWS);
      const rows = await insertRows(manager, documentId, batch, start, leafLevel, prepared, target);
      for (const row of rows) ids[Number(row.ordinal)] = String(row.id);
      written += batch.length;
      await onRows?.(written);
    }
    level = level.flatMap((item, i) => item.node.children.map((node) => ({ node, parentId: ids[i] })));
  }
}

/** One INSERT of consecutive nodes of a level; `first` is the ordinal (position in the level) of the first. */
function insertRows(
  manager: EntityManager,
  documentId: string,
  items: Array<{ node: ChunkNode; parentId: string | null }>,
  first: number,
  leafLevel: number,
  prepared: Map<ChunkNode, PreparedLeaf>,
  target: ChunkWriteTarget,
): Promise<Array<{ id: string; ordinal: number }>> {
  const { withVectorColumn } = target;
  const leaves = items.map((item) => prepared.get(item.node));
  return sqlRows<{ id: string; ordinal: number }>(
    manager,
    `INSERT INTO knowledge_chunks (document_id, parent_id, level, is_leaf, ordinal, page, text, search_vector, embedding,
                                   space_id, dense_epoch ${withVectorColumn ? ', embedding_vector' : ''})
     SELECT $1, t.parent_id, t.level, t.is_leaf, t.ordinal, t.page, t.text, to_tsvector('simple', t.search_text), t.embedding,
            CASE WHEN t.is_leaf THEN $11::smallint END, $12::int ${withVectorColumn ? ', t.vector::vector' : ''}
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
      target.spaceId,
      target.denseEpoch,
    ],
  );
}
