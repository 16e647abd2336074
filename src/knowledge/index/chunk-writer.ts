import { EntityManager } from 'typeorm';
import type { ChunkNode } from '../ingest/chunker.js';
import type { ChunksRepository } from './chunks.repository.js';

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

/** Where a document's leaves go: their collection, their embedding space, their dense epoch, and whether pgvector's column is written too. */
export interface ChunkWriteTarget {
  /** The document's collection, written on every chunk. */
  collectionId: string;
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
  chunks: ChunksRepository,
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
      const rows = await insertRows(chunks, manager, documentId, batch, start, leafLevel, prepared, target);
      for (const row of rows) ids[Number(row.ordinal)] = String(row.id);
      written += batch.length;
      await onRows?.(written);
    }
    level = level.flatMap((item, i) => item.node.children.map((node) => ({ node, parentId: ids[i] })));
  }
}

/** One INSERT of consecutive nodes of a level; `first` is the ordinal (position in the level) of the first. */
function insertRows(
  chunks: ChunksRepository,
  manager: EntityManager,
  documentId: string,
  items: Array<{ node: ChunkNode; parentId: string | null }>,
  first: number,
  leafLevel: number,
  prepared: Map<ChunkNode, PreparedLeaf>,
  target: ChunkWriteTarget,
): Promise<Array<{ id: string; ordinal: number }>> {
  const rows = items.map((item, i) => {
    const leaf = prepared.get(item.node);
    return {
      parentId: item.parentId,
      level: item.node.level,
      isLeaf: item.node.level === leafLevel,
      ordinal: first + i,
      page: item.node.page,
      location: item.node.location,
      text: item.node.text,
      searchText: leaf?.searchText ?? '',
      embedding: leaf?.embedding ?? null,
    };
  });
  return chunks.insert(manager, documentId, rows, target);
}
