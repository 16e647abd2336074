import { DataSource } from 'typeorm';
import { RetrievalScope } from '../../collections/retrieval-scope.js';
import { ChunksRepository } from '../chunks.repository.js';
import { IndexStateRepository } from '../index-state.repository.js';

/**
 * The leaf embeddings column by column: dimension `d` of row `r` is at
 * `columns[d * capacity + r]`, so a query's score is accumulated one
 * dimension at a time over contiguous memory, and only over the dimensions
 * where the query is not zero (a local embedding of a short question has a
 * few dozen of its 256). Rows are appended in id order as leaves are added.
 * Each row also knows its leaf's collection (`codes[r]`, an index into
 * `collections`), so that a search skips the rows of collections outside its
 * scope.
 */
interface LoadedMatrix {
  version: string;
  ids: string[];
  /** The collection of each row, as its index in `collections` (sized like the columns: `capacity`). */
  codes: Uint32Array;
  collections: string[];
  codeOf: Map<string, number>;
  /** Highest leaf id loaded: newer leaves are appended without a reload. */
  lastId: string;
  capacity: number;
  columns: Float32Array;
}

/** Scores of `rows` rows for `query`: the dot product, accumulated over the query's non-zero dimensions. */
export function columnScores(query: Float32Array, columns: Float32Array, rows: number, capacity: number): Float32Array {
  const scores = new Float32Array(rows);
  for (let d = 0; d < query.length; d += 1) {
    const weight = query[d];
    if (weight === 0) continue;
    const base = d * capacity;
    for (let row = 0; row < rows; row += 1) scores[row] += weight * columns[base + row];
  }
  return scores;
}

/** Scores of the rows `rows` (row indexes, ascending) for `query`, in their order: columnScores for a few rows of many. */
export function rowScores(query: Float32Array, columns: Float32Array, rows: Uint32Array, capacity: number): Float32Array {
  const scores = new Float32Array(rows.length);
  for (let d = 0; d < query.length; d += 1) {
    const weight = query[d];
    if (weight === 0) continue;
    const base = d * capacity;
    for (let i = 0; i < rows.length; i += 1) scores[i] += weight * columns[base + rows[i]];
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
  /** Rows of the whole load on its way, and how many it will have (`count` at its start). */
  private whole?: { loaded: number; total: number };

  private readonly state: IndexStateRepository;
  private readonly chunks: ChunksRepository;

  constructor(
    dataSource: DataSource,
    private readonly dimensions: number,
    private readonly spaceId?: () => number,
    /**
     * Rows per statement while loading: each stays far inside the statement timeout, at a million leaves too, and
     * its rows are copied into the matrix in a few milliseconds, so requests are served between the pages.
     */
    private readonly loadBatch = 2_000,
  ) {
    this.state = new IndexStateRepository(dataSource);
    this.chunks = new ChunksRepository(dataSource);
  }

  /** Whether a matrix is loaded (it may be behind the knowledge base; the next query catches it up). */
  get loaded(): boolean {
    return this.matrix !== undefined;
  }

  /** The first load's progress while it is on its way. */
  get progress(): { loaded: number; total: number } | undefined {
    return this.whole && { ...this.whole };
  }

  /** Loads the matrix (at start-up, so that the first queries need not wait for it). */
  async load(): Promise<number> {
    return (await this.current()).ids.length;
  }

  /** Leaf ids of the scope's collections by cosine similarity to the unit-length `query`, best first. */
  async rank(query: Float32Array, limit: number, scope: RetrievalScope = RetrievalScope.unrestricted()): Promise<string[]> {
    return this.rankIn(await this.current(), query, limit, scope);
  }

  /**
   * Like `rank`, but while the first load is on its way (after a start, with
   * many leaves it takes seconds) answers undefined at once instead of
   * waiting for it; the load is started if it was not.
   */
  async rankWhenLoaded(query: Float32Array, limit: number, scope: RetrievalScope): Promise<string[] | undefined> {
    if (!this.matrix) {
      this.current().catch(() => undefined); // its failure reaches the next caller that waits for it
      return undefined;
    }
    return this.rank(query, limit, scope);
  }

  /**
   * The best rows of the scope's collections. A scope of few rows scores
   * those rows only; a larger one scores all and zeroes the others' scores
   * (bestRows keeps positive scores only). Either way the rows of the scope
   * get the same scores, compared in the same order, as in a matrix that
   * held nothing else.
   */
  private rankIn(matrix: LoadedMatrix, query: Float32Array, limit: number, scope: RetrievalScope): string[] {
    const { ids, columns, capacity, codes } = matrix;
    if (ids.length === 0 || query.length !== this.dimensions || scope.empty) return [];
    if (scope.collectionIds === null) return bestRows(columnScores(query, columns, ids.length, capacity), limit).map((row) => ids[row]);
    const allowed = new Uint8Array(matrix.collections.length);
    for (const id of scope.collectionIds) {
      const code = matrix.codeOf.get(id);
      if (code !== undefined) allowed[code] = 1;
    }
    let inScope = 0;
    for (let row = 0; row < ids.length; row += 1) inScope += allowed[codes[row]];
    if (inScope === 0) return [];
    if (inScope * 4 < ids.length) {
      const rows = new Uint32Array(inScope);
      for (let row = 0, i = 0; row < ids.length; row += 1) if (allowed[codes[row]]) rows[i++] = row;
      return bestRows(rowScores(query, columns, rows, capacity), limit).map((i) => ids[rows[i]]);
    }
    const scores = columnScores(query, columns, ids.length, capacity);
    if (inScope < ids.length) for (let row = 0; row < ids.length; row += 1) if (!allowed[codes[row]]) scores[row] = 0;
    return bestRows(scores, limit).map((row) => ids[row]);
  }

  private async current(): Promise<LoadedMatrix> {
    const version = await this.state.version();
    if (this.matrix?.version === version) return this.matrix;
    if (!this.loading) {
      this.loading = this.refresh(version).finally(() => (this.loading = undefined));
    }
    this.matrix = await this.loading;
    return this.matrix;
  }

  /**
   * The matrix at `version`: the rows of leaves added since the loaded one
   * appended, when no loaded leaf is gone (the count tells); else loaded
   * whole.
   */
  private async refresh(version: string): Promise<LoadedMatrix> {
    const loaded = this.matrix;
    const count = await this.chunks.countWhere(this.usableLeaves());
    if (loaded) {
      // A leaf's collection is its document's, which never changes: the rows loaded keep theirs.
      const added = await this.rows(loaded.lastId);
      if (count === loaded.ids.length + added.length) {
        return this.append({ ...loaded, version, ids: [...loaded.ids], collections: [...loaded.collections], codeOf: new Map(loaded.codeOf) }, added);
      }
    }
    // Page by page into a matrix sized for them all: the event loop serves requests between the pages.
    const matrix: LoadedMatrix = {
      version,
      ids: [],
      codes: new Uint32Array(count),
      collections: [],
      codeOf: new Map(),
      lastId: '0',
      capacity: count,
      columns: new Float32Array(count * this.dimensions),
    };
    this.whole = { loaded: 0, total: count };
    try {
      for (let after: string | undefined = '0'; after !== undefined;) {
        const page = await this.page(after);
        this.append(matrix, page.rows);
        this.whole.loaded = matrix.ids.length;
        after = page.next;
      }
      return matrix;
    } finally {
      this.whole = undefined;
    }
  }

  private usableLeaves(): string {
    const space = this.spaceId?.();
    return `is_leaf AND octet_length(embedding) = ${this.dimensions * Float32Array.BYTES_PER_ELEMENT}${space === undefined ? '' : ` AND space_id = ${Number(space)}`}`;
  }

  /**
   * The usable leaves among the next `loadBatch` chunks after `afterId`, and
   * the id to read on from (undefined: none left). The chunks are read in
   * primary-key order and filtered here, not in the WHERE clause: with the
   * filter there, PostgreSQL expected few matches and scanned (and sorted)
   * the whole table for every page, seconds each at a million leaves.
   */
  private async page(afterId: string): Promise<{ rows: LeafRow[]; next?: string }> {
    const chunks = await this.chunks.embeddingPage(this.usableLeaves(), afterId, this.loadBatch);
    return {
      rows: chunks.filter((chunk): chunk is LeafRow => chunk.embedding !== null),
      next: chunks.length < this.loadBatch ? undefined : chunks[chunks.length - 1].id,
    };
  }

  private async rows(afterId: string): Promise<LeafRow[]> {
    const all: LeafRow[] = [];
    for (let after: string | undefined = afterId; after !== undefined;) {
      const page = await this.page(after);
      all.push(...page.rows);
      after = page.next;
    }
    return all;
  }

  /** The code of `collectionId` in `matrix`, given one when it has none yet. */
  private codeOf(matrix: LoadedMatrix, collectionId: string): number {
    let code = matrix.codeOf.get(collectionId);
    if (code === undefined) {
      code = matrix.collections.push(collectionId) - 1;
      matrix.codeOf.set(collectionId, code);
    }
    return code;
  }

  /**
   * Appends `rows` to `matrix` (its own: not one a query may be reading,
   * though it may share its column array, whose rows past the reader's
   * `ids.length` no reader looks at) and returns it.
   */
  private append(matrix: LoadedMatrix, rows: LeafRow[]): LoadedMatrix {
    if (rows.length === 0) return matrix;
    const n = matrix.ids.length;
    if (n + rows.length > matrix.capacity) {
      // Grows by half again at least, so appending leaf after leaf stays linear overall.
      const grown = Math.max(n + rows.length, Math.ceil(matrix.capacity * 1.5), 1024);
      const next = new Float32Array(grown * this.dimensions);
      for (let d = 0; d < this.dimensions; d += 1) next.set(matrix.columns.subarray(d * matrix.capacity, d * matrix.capacity + n), d * grown);
      const codes = new Uint32Array(grown);
      codes.set(matrix.codes.subarray(0, n));
      matrix.capacity = grown;
      matrix.columns = next;
      matrix.codes = codes;
    }
    const { capacity, columns, codes } = matrix;
    rows.forEach((row, i) => {
      const vector = floatsOf(row.embedding, this.dimensions);
      for (let d = 0; d < this.dimensions; d += 1) columns[d * capacity + n + i] = vector[d];
      codes[n + i] = this.codeOf(matrix, row.collection_id);
      matrix.ids.push(row.id);
    });
    matrix.lastId = rows[rows.length - 1].id;
    return matrix;
  }
}

/** A usable leaf as loaded: its id, collection and embedding bytes. */
interface LeafRow {
  id: string;
  collection_id: string;
  embedding: Buffer;
}

/** The float32 view of a stored embedding (little-endian bytes, as ingest writes them). */
export function floatsOf(bytes: Buffer, dimensions: number): Float32Array {
  // A copy when the buffer's offset is not 4-aligned (pg's row buffers can start anywhere).
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : Buffer.from(bytes);
  return new Float32Array(aligned.buffer, aligned.byteOffset, dimensions);
}
