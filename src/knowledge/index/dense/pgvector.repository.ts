import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { isBehind } from '../../../database/database.module.js';
import { sqlRows } from '../../../database/sql.js';
import { RetrievalScope } from '../../collections/retrieval-scope.js';
import { scopeParams } from '../scope-filter.js';
import { floatsOf } from './memory-dense-index.js';

/** pgvector's HNSW index takes vectors of at most this many dimensions. */
export const HNSW_MAX_DIMENSIONS = 2000;

const BACKFILL_BATCH = 1000;

/**
 * A search scope of at most this many leaves is ranked exactly rather than
 * by HNSW: its distances cost about a millisecond, and an exact ranking
 * cannot miss the few readable leaves among many others.
 */
export const EXACT_SCOPE_MAX_LEAVES = 2000;

/**
 * The session advisory lock (one bigint key) under which an instance builds,
 * swaps and drops the HNSW indexes of knowledge_chunks.
 */
const INDEX_MAINTENANCE_LOCK = '7283046215530719';

/** The first and the longest pause between two tries of INDEX_MAINTENANCE_LOCK. */
const LOCK_RETRY_MS = [50, 1000] as const;

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

/** What one pass of index maintenance did (see PgvectorStore.converge). */
export interface IndexMaintenance {
  /** The dense epoch current afterwards; the index covers the leaves of epochs <= it. */
  epoch: number;
  /** The index serving it. */
  index: string;
  /** Whether this pass built it (CREATE INDEX CONCURRENTLY), and how long that took. */
  built: boolean;
  buildMs: number;
  /** Whether this pass moved knowledge_index_state.dense_epoch. */
  swapped: boolean;
  /** Indexes this pass dropped: older epochs', the pre-epoch name, invalid leftovers of interrupted builds. */
  dropped: string[];
}

export interface PgvectorStoreOptions {
  /** Only leaves of this embedding space are ranked; read per query (IndexIdentity knows it once started). */
  spaceId?: () => number;
  /** Scopes of fewer leaves are ranked exactly (default EXACT_SCOPE_MAX_LEAVES; tests lower it to reach the HNSW path). */
  exactScopeLeaves?: number;
}

/**
 * The dense leg in PostgreSQL with pgvector: cosine distance over the leaf
 * embeddings, served by an HNSW index on the configured embedding size.
 *
 * The index is a partial expression index (`embedding_vector::vector(N)` for
 * rows of N dimensions), since the column's size is not fixed by the schema,
 * and covers the leaves of dense epochs up to the current one E
 * (`knowledge_index_state.dense_epoch`): `idx_knowledge_chunks_hnsw_<N>_e<E>`.
 * Ordinary ingests write epoch E, and PostgreSQL keeps the index up to date
 * on every insert. A bulk load writes epoch E+1, outside the index, so its
 * rows are written without touching the HNSW graph; afterwards (`converge`)
 * an index over epochs <= E+1 is built concurrently under its new name,
 * E moves to E+1 in one statement, and the old index is dropped concurrently.
 * Searches go on throughout: each query reads E and states `dense_epoch <= E`,
 * which the index of epoch E (or any later one) answers.
 */
export class PgvectorStore {
  private iterativeScan?: Promise<boolean>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly dimensions: number,
    private readonly efSearch: number,
    private readonly options: PgvectorStoreOptions = {},
  ) {}

  get indexed(): boolean {
    return this.dimensions <= HNSW_MAX_DIMENSIONS;
  }

  /** The HNSW index over the leaves of dense epochs <= `epoch`. */
  indexNameFor(epoch: number): string {
    return `idx_knowledge_chunks_hnsw_${this.dimensions}_e${epoch}`;
  }

  /** The index's name before dense epochs: it covered every leaf of N dimensions; replaced at start. */
  get legacyIndexName(): string {
    return `idx_knowledge_chunks_hnsw_${this.dimensions}`;
  }

  /** `knowledge_index_state.dense_epoch`: the index covers the leaves of epochs up to it. */
  async currentEpoch(db: DataSource | EntityManager = this.dataSource): Promise<number> {
    const [state] = await sqlRows<{ dense_epoch: number }>(db, 'SELECT dense_epoch FROM knowledge_index_state WHERE id = 1');
    return Number(state.dense_epoch);
  }

  /** The latest dense epoch past the current one that leaves were bulk-loaded into, if any: leaves no index covers yet. */
  async pendingEpoch(db: DataSource | EntityManager = this.dataSource): Promise<number | null> {
    const [row] = await sqlRows<{ epoch: number | null }>(
      db,
      `SELECT max(dense_epoch) AS epoch FROM knowledge_chunks
        WHERE is_leaf AND dense_epoch > (SELECT dense_epoch FROM knowledge_index_state WHERE id = 1)`,
    );
    return row.epoch === null ? null : Number(row.epoch);
  }

  /**
   * Builds, swaps and drops HNSW indexes until exactly one valid index covers
   * the current epoch, under a session advisory lock (instances take turns;
   * the next one finds the work done). `epoch`: a bulk load's epoch, which
   * becomes current. Also finishes what an instance that died left behind:
   * leaves of an epoch past the current one (a bulk load committed, its index
   * never swapped in), an INVALID index (a build interrupted), indexes of
   * older epochs or of the pre-epoch name. Without `wait`, returns null when
   * another instance holds the lock (it is doing this same work). Run it on a
   * maintenance connection: the build has no time limit.
   */
  async converge(options: { epoch?: number; wait: boolean; buildMemory: string; signal?: AbortSignal }): Promise<IndexMaintenance | null> {
    if (!this.indexed) return null;
    const { signal } = options;
    signal?.throwIfAborted();
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let stopCancelling: (() => void) | undefined;
    try {
      if (signal) stopCancelling = await this.cancelOnAbort(runner, signal);
      if (!(await tryLock(runner, options.wait))) return null;
      try {
        return await this.convergeLocked(runner, options.epoch ?? 0, options.buildMemory, signal);
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [INDEX_MAINTENANCE_LOCK]);
      }
    } finally {
      stopCancelling?.();
      await runner.release();
    }
  }

  /**
   * Cancels the statement `runner` is running (an index build waiting for
   * old transactions, a drop waiting for queries) when `signal` aborts, from
   * another connection: an instance shutting down stops its index upkeep
   * instead of leaving it running behind it. A build cancelled leaves an
   * INVALID index, which the next converge drops and builds again.
   */
  private async cancelOnAbort(runner: QueryRunner, signal: AbortSignal): Promise<() => void> {
    const [{ pid }] = await sqlRows<{ pid: number }>(runner.manager, 'SELECT pg_backend_pid() AS pid');
    const cancel = () => void this.dataSource.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    signal.addEventListener('abort', cancel, { once: true });
    return () => signal.removeEventListener('abort', cancel);
  }

  private async convergeLocked(runner: QueryRunner, requested: number, buildMemory: string, signal?: AbortSignal): Promise<IndexMaintenance> {
    const db = runner.manager;
    const current = await this.currentEpoch(db);
    // Leaves of a later epoch that no instance made searchable: loads that left the build to a later one, or an
    // instance that died between a load's commit and the swap.
    const pending = await this.pendingEpoch(db);
    const target = Math.max(current, requested, pending ?? current);
    const name = this.indexNameFor(target);
    const dropped: string[] = [];
    let indexes = await this.hnswIndexes(db);
    const existing = indexes.find((index) => index.name === name);
    if (existing && !existing.valid) {
      // Left by a build that was interrupted (CREATE INDEX CONCURRENTLY leaves the catalog entry behind).
      await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
      dropped.push(name);
    }
    let built = false;
    let buildMs = 0;
    if (!existing?.valid) {
      signal?.throwIfAborted();
      const started = performance.now();
      await runner.query(`SELECT set_config('maintenance_work_mem', $1, false)`, [buildMemory]);
      await runner.query(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ON knowledge_chunks
           USING hnsw ((embedding_vector::vector(${this.dimensions})) vector_cosine_ops)
           WHERE ${this.coverage(target)}`,
      );
      built = true;
      buildMs = performance.now() - started;
    }
    let swapped = false;
    signal?.throwIfAborted();
    if (target > current) {
      // One statement: queries read the new epoch (and plan on the new index) from its commit on.
      const moved = await sqlRows(
        db,
        `UPDATE knowledge_index_state SET dense_epoch = $1, version = version + 1, bulk_pending_since = NULL
          WHERE id = 1 AND dense_epoch < $1 RETURNING 1`,
        [target],
      );
      swapped = moved.length > 0;
    }
    indexes = await this.hnswIndexes(db);
    for (const index of indexes) {
      if (index.name === name) continue;
      signal?.throwIfAborted();
      // DROP INDEX CONCURRENTLY waits for the queries still using it, and blocks none.
      await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${index.name}"`);
      dropped.push(index.name);
    }
    return { epoch: target, index: name, built, buildMs, swapped, dropped };
  }

  /** The partial index predicate (and the dense query's filter) for the leaves of epochs <= `epoch`. */
  private coverage(epoch: number): string {
    if (!Number.isSafeInteger(epoch)) throw new Error(`not a dense epoch: ${epoch}`);
    return `is_leaf AND vector_dims(embedding_vector) = ${this.dimensions} AND dense_epoch <= ${epoch}`;
  }

  /** This size's HNSW indexes on knowledge_chunks (every epoch's and the pre-epoch name), valid or not. */
  private async hnswIndexes(db: EntityManager): Promise<Array<{ name: string; valid: boolean }>> {
    return sqlRows<{ name: string; valid: boolean }>(
      db,
      `SELECT c.relname AS name, i.indisvalid AS valid
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'knowledge_chunks'::regclass AND c.relname ~ $1
        ORDER BY c.relname`,
      [`^idx_knowledge_chunks_hnsw_${this.dimensions}(_e[0-9]+)?$`],
    );
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

  /**
   * Leaf ids of the scope's collections by cosine similarity to `query`,
   * best first; only positive similarities, as the in-memory leg. With HNSW,
   * only the leaves of the current dense epoch and before: a bulk load's
   * leaves join after its swap.
   *
   * The scope is a condition of the query itself. With HNSW, a scope of at
   * most `exactScopeLeaves` leaves is ranked exactly (its leaves found by the
   * collection index, every distance computed: a small readable collection
   * is never starved by a big unreadable one); a larger one is ranked by the
   * index with pgvector 0.8's iterative scan, which goes on until `limit`
   * leaves pass the filter, and exactly when it still comes back short (its
   * scan bounded by hnsw.max_scan_tuples, or a pgvector without it).
   */
  async rank(query: Float32Array, limit: number, scope: RetrievalScope = RetrievalScope.unrestricted()): Promise<string[]> {
    return (await this.rankOn(this.dataSource, query, limit, scope)).value;
  }

  /**
   * The same ranking on `db` (the read replica, say: a physical copy, with
   * the same indexes), with the knowledge base's version as `db` holds it in
   * the ranking's transaction (null for a query that reads nothing). Given
   * `atLeast` (on a replica), it stops after its first statement when that
   * version is older, with no ranking.
   */
  async rankOn(
    db: DataSource,
    query: Float32Array,
    limit: number,
    scope: RetrievalScope = RetrievalScope.unrestricted(),
    atLeast?: string,
  ): Promise<{ version: string | null; value: string[] }> {
    if (query.length !== this.dimensions || scope.empty) return { version: null, value: [] };
    const spaceId = this.options.spaceId?.();
    const restricted = scope.collectionIds !== null;
    const iterative = this.indexed && (spaceId !== undefined || restricted) && (await this.supportsIterativeScan());
    return db.transaction(async (manager) => {
      // HNSW yields at most ef_search rows per scan: make room for `limit`. The epoch goes into the SQL as a
      // literal, so that the planner can match the query to the partial index (a parameter it cannot).
      // Both settings are SET LOCAL (set_config(..., true)): they end with this transaction.
      const [state] = await sqlRows<{ epoch: number; version: string }>(
        manager,
        `SELECT set_config('hnsw.ef_search', $1, true)${iterative ? `, set_config('hnsw.iterative_scan', 'relaxed_order', true)` : ''},
                s.dense_epoch AS epoch, s.version::text AS version
           FROM knowledge_index_state s WHERE s.id = 1`,
        [String(Math.max(this.efSearch, limit))],
      );
      const version = state.version;
      // A replica behind the version asked for: its ranking would be thrown away (the primary ranks instead).
      if (isBehind(version, atLeast)) return { version, value: [] };
      const filters = [
        this.indexed ? this.coverage(Number(state.epoch)) : `is_leaf AND vector_dims(embedding_vector) = ${this.dimensions}`,
        ...(spaceId === undefined ? [] : [`space_id = ${Number(spaceId)}`]),
        ...(restricted ? ['collection_id = ANY($3::uuid[])'] : []),
      ].join(' AND ');
      const params = [vectorLiteral(query), limit, ...scopeParams(scope)];
      if (this.indexed && restricted && (await this.scopeLeavesUpTo(manager, scope, this.exactScopeLeaves)) < this.exactScopeLeaves) {
        return { version, value: await this.exactRank(manager, filters, params) };
      }
      // With a filter HNSW scans on (iterative_scan) until `limit` rows pass it; relaxed_order may
      // yield them slightly out of order, hence the sort of the materialized result.
      const n = this.dimensions;
      const rows = await sqlRows<{ id: string; distance: number }>(
        manager,
        `WITH nearest AS MATERIALIZED (
           SELECT id, embedding_vector::vector(${n}) <=> $1::vector(${n}) AS distance
             FROM knowledge_chunks
            WHERE ${filters}
            ORDER BY embedding_vector::vector(${n}) <=> $1::vector(${n})
            LIMIT $2)
         SELECT id, distance FROM nearest ORDER BY distance, id`,
        params,
      );
      if (this.indexed && restricted && rows.length < limit) return { version, value: await this.exactRank(manager, filters, params) };
      return { version, value: rows.filter((row) => row.distance < 1).map((row) => String(row.id)) };
    });
  }

  /** The leaves passing `filters`, ranked exactly: every distance computed, no index on the vectors used. */
  private async exactRank(manager: EntityManager, filters: string, params: unknown[]): Promise<string[]> {
    const n = this.dimensions;
    const rows = await sqlRows<{ id: string; distance: number }>(
      manager,
      `WITH scoped AS MATERIALIZED (SELECT id, embedding_vector FROM knowledge_chunks WHERE ${filters})
       SELECT id, embedding_vector::vector(${n}) <=> $1::vector(${n}) AS distance FROM scoped
        ORDER BY distance, id LIMIT $2`,
      params,
    );
    return rows.filter((row) => row.distance < 1).map((row) => String(row.id));
  }

  /** How many leaves the scope's collections hold, counted up to `cap` (an index-only scan of at most `cap` entries). */
  private async scopeLeavesUpTo(manager: EntityManager, scope: RetrievalScope, cap: number): Promise<number> {
    const [row] = await sqlRows<{ leaves: number }>(
      manager,
      `SELECT count(*)::int AS leaves FROM (SELECT 1 FROM knowledge_chunks WHERE is_leaf AND collection_id = ANY($1::uuid[]) LIMIT ${Math.trunc(cap)}) s`,
      scopeParams(scope),
    );
    return row.leaves;
  }

  private get exactScopeLeaves(): number {
    return this.options.exactScopeLeaves ?? EXACT_SCOPE_MAX_LEAVES;
  }

  /** pgvector 0.8 added iterative index scans (`hnsw.iterative_scan`); before it the setting is refused. */
  private supportsIterativeScan(): Promise<boolean> {
    this.iterativeScan ??= sqlRows<{ version: string }>(this.dataSource, `SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`)
      .then(([row]) => {
        const [major, minor] = (row?.version ?? '0.0').split('.').map(Number);
        return major > 0 || minor >= 8;
      })
      .catch((error) => {
        this.iterativeScan = undefined;
        throw error;
      });
    return this.iterativeScan;
  }
}

/**
 * Takes INDEX_MAINTENANCE_LOCK for `runner`'s session; with `wait`, tries
 * until it gets it. Not pg_advisory_lock: a session waiting in it holds a
 * snapshot, which the holder's CREATE INDEX CONCURRENTLY waits for, and
 * PostgreSQL ends the pair as a deadlock; between two tries there is none.
 */
async function tryLock(runner: QueryRunner, wait: boolean): Promise<boolean> {
  let pause: number = LOCK_RETRY_MS[0];
  for (;;) {
    const [row] = await sqlRows<{ locked: boolean }>(runner.manager, 'SELECT pg_try_advisory_lock($1) AS locked', [INDEX_MAINTENANCE_LOCK]);
    if (row.locked) return true;
    if (!wait) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, LOCK_RETRY_MS[1]);
  }
}
