import { DataSource } from 'typeorm';
import { sqlRows } from '../../database/sql.js';

interface LoadedMatrix {
  version: string;
  ids: string[];
  vectors: Float32Array;
}

/** The dot product of `query` with each of `rows` vectors; unrolled by four, which V8 runs about 1.5x faster. */
export function dotProducts(query: Float32Array, vectors: Float32Array, rows: number, dimensions: number): Float32Array {
  const scores = new Float32Array(rows);
  const blocked = dimensions - (dimensions % 4);
  for (let row = 0; row < rows; row += 1) {
    const offset = row * dimensions;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let d = 0; d < blocked; d += 4) {
      s0 += query[d] * vectors[offset + d];
      s1 += query[d + 1] * vectors[offset + d + 1];
      s2 += query[d + 2] * vectors[offset + d + 2];
      s3 += query[d + 3] * vectors[offset + d + 3];
    }
    for (let d = blocked; d < dimensions; d += 1) s0 += query[d] * vectors[offset + d];
    scores[row] = s0 + s1 + s2 + s3;
  }
  return scores;
}

/** Indexes of the `limit` highest positive scores, best first: one pass with a small insertion-sorted buffer. */
export function bestRows(scores: Float32Array, limit: number): number[] {
  const rows: number[] = [];
  const best: number[] = [];
  for (let row = 0; row < scores.length; row += 1) {
    const score = scores[row];
    if (score <= 0 || (best.length === limit && score <= best[limit - 1])) continue;
    let at = best.length;
    while (at > 0 && best[at - 1] < score) at -= 1;
    best.splice(at, 0, score);
    rows.splice(at, 0, row);
    if (best.length > limit) {
      best.pop();
      rows.pop();
    }
  }
  return rows;
}

/**
 * The dense leg without a database extension: an exact scan of an in-memory
 * matrix of the leaf embeddings (stored as float32 bytes), reloaded whenever
 * the knowledge base changes (the `knowledge_index_state` version row).
 * With `spaceId`, only the leaves of that embedding space.
 */
export class MemoryDenseIndex {
  private matrix?: LoadedMatrix;
  private loading?: Promise<LoadedMatrix>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly dimensions: number,
    private readonly spaceId?: () => number,
  ) {}

  /** Leaf ids by cosine similarity to the unit-length `query`, best first. */
  async rank(query: Float32Array, limit: number): Promise<string[]> {
    const { ids, vectors } = await this.current();
    if (ids.length === 0 || query.length !== this.dimensions) return [];
    return bestRows(dotProducts(query, vectors, ids.length, this.dimensions), limit).map((row) => ids[row]);
  }

  private async current(): Promise<LoadedMatrix> {
    const [{ version }] = await sqlRows<{ version: string }>(this.dataSource, 'SELECT version::text FROM knowledge_index_state WHERE id = 1');
    if (this.matrix?.version === version) return this.matrix;
    if (!this.loading) {
      this.loading = this.load(version).finally(() => (this.loading = undefined));
    }
    this.matrix = await this.loading;
    return this.matrix;
  }

  private async load(version: string): Promise<LoadedMatrix> {
    const space = this.spaceId?.();
    const rows = await sqlRows<{ id: string; embedding: Buffer | null }>(
      this.dataSource,
      `SELECT id, embedding FROM knowledge_chunks
        WHERE is_leaf AND embedding IS NOT NULL${space === undefined ? '' : ' AND space_id = $1'} ORDER BY id`,
      space === undefined ? [] : [space],
    );
    const bytes = this.dimensions * Float32Array.BYTES_PER_ELEMENT;
    const usable = rows.filter((row) => row.embedding?.length === bytes);
    const vectors = new Float32Array(usable.length * this.dimensions);
    usable.forEach((row, i) => vectors.set(floatsOf(row.embedding!, this.dimensions), i * this.dimensions));
    return { version, ids: usable.map((row) => String(row.id)), vectors };
  }
}

/** The float32 view of a stored embedding (little-endian bytes, as ingest writes them). */
export function floatsOf(bytes: Buffer, dimensions: number): Float32Array {
  // A copy when the buffer's offset is not 4-aligned (pg's row buffers can start anywhere).
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : Buffer.from(bytes);
  return new Float32Array(aligned.buffer, aligned.byteOffset, dimensions);
}
