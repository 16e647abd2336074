import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pRetry from 'p-retry';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { Readiness, ReadinessState } from '../../../common/readiness.js';
import type { VersionedRead } from '../../../database/database.module.js';
import { withMaintenanceDataSource } from '../../../database/maintenance.js';
import { pgErrorCode } from '../../../database/sql.js';
import { Metrics } from '../../../observability/metrics.js';
import { traceEmbeddings } from '../../../observability/spans.js';
import type { RetrievalScope } from '../../collections/retrieval-scope.js';
import { ChunksRepository } from '../chunks.repository.js';
import { EmbeddingProvider } from '../embeddings.js';
import { IndexIdentity } from '../index-identity.js';
import { IndexStateRepository } from '../index-state.repository.js';
import { MemoryDenseIndex } from './memory-dense-index.js';
import { hasVectorColumn, IndexMaintenance, PgvectorStore } from './pgvector.repository.js';

/** A bulk load's leaves wait for their index build at most this many quiet periods (see finishPendingBulkLoads). */
export const BULK_BUILD_MAX_WAIT = 10;

export type DenseBackend = 'pgvector-hnsw' | 'pgvector-exact' | 'memory';

export interface DenseRanking {
  ids: string[];
  /** The backend that produced `ids`. */
  backend: DenseBackend;
  /** Why the configured backend was not used for this query (it failed, and the in-memory index answered). */
  error?: string;
  /** Why there is no dense ranking (`ids` is empty): the in-memory index is still loading after a start. */
  skipped?: string;
}

/**
 * The dense retrieval leg. With RAG_DENSE_BACKEND=auto it searches in
 * PostgreSQL through pgvector where the database has it, and otherwise an
 * in-memory index; a pgvector query that fails is answered by the in-memory
 * index instead, and the ranking says so.
 */
@Injectable()
export class DenseRecall implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DenseRecall.name);
  private readonly memory: MemoryDenseIndex;
  private readonly state: IndexStateRepository;
  private readonly chunks: ChunksRepository;
  private pgvector: PgvectorStore | null = null;
  private vectorColumn = false;
  /** The first attempt of the in-memory index's load at start-up, settled (loaded or failed); see `warmedUp`. */
  private warming: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
    private readonly identity: IndexIdentity,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    readiness: Readiness,
    private readonly metrics: Metrics,
  ) {
    // Only this instance's embedding space is ranked: vectors of another are not comparable.
    this.state = new IndexStateRepository(dataSource);
    this.chunks = new ChunksRepository(dataSource);
    this.memory = new MemoryDenseIndex(dataSource, embeddings.dimensions, () => identity.spaceId);
    readiness.register('dense_index', () => this.readiness());
  }

  /**
   * With the in-memory backend, loads the index in the background: start-up
   * (and app.listen) does not wait for it, queries meanwhile rank by full
   * text alone, and GET /health/ready says not ready until it is loaded.
   */
  onApplicationBootstrap(): void {
    if (this.pgvector) return;
    const started = performance.now();
    let firstAttemptEnded!: () => void;
    this.warming = new Promise((resolve) => (firstAttemptEnded = resolve));
    // Asked again until it loads: a load balancer sends no query that would start it, and the instance must get ready.
    pRetry(() => this.memory.load().finally(firstAttemptEnded), {
      retries: Infinity,
      minTimeout: 1000,
      maxTimeout: 30_000,
      unref: true,
      signal: this.stopping.signal,
      onFailedAttempt: ({ error, attemptNumber }) => {
        this.logger.warn({ err: error }, `in-memory dense index not loaded at start-up (attempt ${attemptNumber}); trying again`);
      },
    }).then(
      (leaves) => this.logger.log(`dense retrieval: in-memory index loaded (${leaves} leaves in ${Math.round(performance.now() - started)} ms)`),
      (error: Error) => {
        if (!this.stopping.signal.aborted) this.logger.warn({ err: error }, 'in-memory dense index not loaded at start-up; the next knowledge query loads it');
      },
    );
  }

  onApplicationShutdown(): void {
    this.stopping.abort();
  }

  /** Settles when the first attempt of the start-up load of the in-memory index has ended, loaded or not. */
  get warmedUp(): Promise<void> {
    return this.warming;
  }

  private readiness(): ReadinessState {
    if (this.pgvector) return { status: 'up', backend: this.backend };
    if (this.memory.loaded) return { status: 'up', backend: 'memory' };
    const progress = this.memory.progress;
    return {
      status: 'down',
      backend: 'memory',
      message: 'the in-memory dense index is loading; knowledge queries rank by full text alone until it is loaded',
      ...(progress ? { leaves_loaded: progress.loaded, leaves_total: progress.total } : {}),
    };
  }

  async onModuleInit(): Promise<void> {
    const configured = this.config.dense.backend;
    // HNSW finds about half of the exact neighbours of hashed (sparse) embeddings at any affordable ef_search; the exact
    // in-memory scan finds them all, in milliseconds (docs/knowledge-base.md, "Dense backends").
    const wanted = configured === 'auto' && this.embeddings.sparse ? 'memory' : configured;
    this.vectorColumn = await hasVectorColumn(this.dataSource);
    if (wanted === 'pgvector' && !this.vectorColumn) {
      throw new Error(
        'RAG_DENSE_BACKEND=pgvector, but this database has no pgvector column: install the pgvector extension ' +
          'on the server before the migrations run, or set RAG_DENSE_BACKEND to auto or memory',
      );
    }
    if (!this.vectorColumn) {
      this.logger.log('dense retrieval: in-memory index (pgvector is not installed in this database)');
      return;
    }
    const store = new PgvectorStore(this.dataSource, this.embeddings.dimensions, this.config.dense.hnswEfSearch, {
      spaceId: () => this.identity.spaceId,
    });
    const started = performance.now();
    // Backfill and index build may outlast the app's statement limits: they run on a maintenance connection.
    const { filled, maintenance } = await withMaintenanceDataSource(this.config, async (dataSource) => {
      const maintained = this.maintainedStore(dataSource);
      // Kept filled whichever backend serves queries, so that switching needs no re-ingest.
      const count = await maintained.backfill();
      // Without waiting: an instance holding the maintenance lock is doing the same work, and the index of an
      // earlier epoch (or, on a new database, a scan) answers meanwhile.
      const done = wanted === 'memory' ? null : await maintained.converge({ wait: false, buildMemory: this.config.dense.hnswBuildMemory });
      return { filled: count, maintenance: done };
    });
    if (wanted === 'memory') {
      this.logger.log(
        `dense retrieval: in-memory index (${configured === 'memory' ? 'RAG_DENSE_BACKEND=memory' : `RAG_DENSE_BACKEND=auto with the sparse ${this.embeddings.name} embeddings: an exact scan`})`,
      );
      return;
    }
    this.pgvector = store;
    const index = !store.indexed
      ? 'exact scan (too many dimensions for HNSW)'
      : maintenance
        ? `HNSW index ${maintenance.index}${describeMaintenance(maintenance)}`
        : 'HNSW index (another instance is maintaining it)';
    this.logger.log(`dense retrieval: pgvector, ${index} (${filled} vectors backfilled, ready in ${Math.round(performance.now() - started)} ms)`);
  }

  /**
   * The dense epoch an ingest's leaves get (`knowledge_chunks.dense_epoch`).
   * A bulk load with the HNSW index gets the next epoch, outside the current
   * index, so that writing its rows does not update the HNSW graph row by
   * row (see finishBulkLoad); others get the current one.
   */
  async epochForNewLeaves(bulk: boolean): Promise<number> {
    const epoch = await new PgvectorStore(this.dataSource, this.embeddings.dimensions, 0).currentEpoch();
    return bulk && this.bulkLoadsOutsideIndex ? epoch + 1 : epoch;
  }

  /** Whether a bulk load's leaves stay outside the dense index until an index build covers them (pgvector's HNSW). */
  get bulkLoadsOutsideIndex(): boolean {
    return this.pgvector?.indexed === true;
  }

  /**
   * After a bulk load's commit: makes its leaves (of `epoch`) searchable by
   * the dense leg. Builds the HNSW index over epochs <= `epoch` concurrently,
   * moves the current epoch to it and drops the old index; searches use the
   * old one meanwhile. Instances take turns; when another one already did
   * it, this returns at once. The caller must hold no open transaction on
   * the database: the concurrent build waits for every older one. The
   * index covers every epoch up to `epoch`, so loads of many documents build
   * it once, after the last (IngestOptions.deferIndexBuild).
   */
  async finishBulkLoad(epoch: number): Promise<void> {
    if (!this.pgvector?.indexed) return;
    const done = await withMaintenanceDataSource(this.config, (dataSource) =>
      this.maintainedStore(dataSource).converge({ epoch, wait: true, buildMemory: this.config.dense.hnswBuildMemory }),
    );
    if (done) this.logger.log(`bulk load of dense epoch ${epoch}: HNSW index ${done.index}${describeMaintenance(done)}`);
  }

  /**
   * Builds the HNSW index for bulk-loaded leaves that no index covers yet,
   * once their load has ended: no bulk load has committed for `quietMs`
   * (a load of many documents commits one every few seconds), or the oldest
   * of them has waited BULK_BUILD_MAX_WAIT times that (a load that does not
   * pause). Their load left the build to a later job that did not build it
   * (it failed, or was no bulk load), or the instance died between the commit
   * and the build. Returns at once when there are none (an index lookup) or
   * another instance is building. `signal` stops the build (its instance is shutting down).
   */
  async finishPendingBulkLoads(quietMs: number, signal?: AbortSignal): Promise<void> {
    if (!this.pgvector?.indexed) return;
    const pending = await this.pgvector.pendingEpoch();
    if (pending === null) {
      // A load that committed its leaves into the epoch a build was covering: nothing waits for a build after all.
      await this.state.clearBulkPendingWithoutLeaves();
      return;
    }
    if (!(await this.state.bulkBuildDue(quietMs / 1000, (quietMs * BULK_BUILD_MAX_WAIT) / 1000))) return;
    const done = await withMaintenanceDataSource(this.config, (dataSource) =>
      this.maintainedStore(dataSource).converge({ wait: false, buildMemory: this.config.dense.hnswBuildMemory, signal }),
    );
    if (done) this.logger.log(`bulk-loaded leaves without an index (dense epoch ${pending}): HNSW index ${done.index}${describeMaintenance(done)}`);
  }

  private maintainedStore(dataSource: DataSource): PgvectorStore {
    return new PgvectorStore(dataSource, this.embeddings.dimensions, this.config.dense.hnswEfSearch);
  }

  /**
   * Whether a document of `leafCount` leaves is worth a bulk load: only with
   * the HNSW index, and only when the rebuild (which covers every indexed
   * leaf, at a few ms each) costs less than inserting the leaves one by one
   * into the graph (~14 ms each at 100 000 leaves): from
   * KNOWLEDGE_BULK_LEAVES leaves, and at least a quarter of those indexed.
   */
  async worthBulkLoad(leafCount: number): Promise<boolean> {
    const threshold = this.config.knowledge.bulkLeaves;
    if (this.backend !== 'pgvector-hnsw' || threshold === 0 || leafCount < threshold) return false;
    return leafCount >= (await this.chunks.leafCount()) / 4;
  }

  /** Whether ingest must also write `embedding_vector`. */
  get writesVectorColumn(): boolean {
    return this.vectorColumn;
  }

  get backend(): DenseBackend {
    if (!this.pgvector) return 'memory';
    return this.pgvector.indexed ? 'pgvector-hnsw' : 'pgvector-exact';
  }

  /** Leaf ids of the scope's collections ranked by similarity to `query`'s embedding, best first (the scope filters inside each backend's ranking). */
  /**
   * With `reads` (a search's, HybridRecall), pgvector's ranking runs where
   * they run: on the read replica when it holds the knowledge base's version;
   * the in-memory index is this instance's own.
   */
  async rank(query: string, limit: number, scope: RetrievalScope, reads?: VersionedRead): Promise<DenseRanking> {
    const { provider, model, dimensions } = this.embeddings;
    const [embedded] = await this.metrics.modelCall({ operation: 'embeddings', provider, model }, () =>
      traceEmbeddings({ provider, model, dimensions, inputs: 1 }, () => this.embeddings.embed([query])),
    );
    const vector = Float32Array.from(embedded);
    if (this.pgvector) {
      try {
        const pgvector = this.pgvector;
        const ids = reads ? await reads((db, atLeast) => pgvector.rankOn(db, vector, limit, scope, atLeast)) : await pgvector.rank(vector, limit, scope);
        return { ids, backend: this.backend };
      } catch (error) {
        // The trace and the step event (clients read both) get the SQLSTATE; the driver's words go to the log.
        const code = pgErrorCode(error);
        const reason = `pgvector search failed${code ? ` (SQLSTATE ${code})` : ''}`;
        this.logger.warn({ err: error }, `${reason}; answered from the in-memory index`);
        return { ids: await this.memory.rank(vector, limit, scope), backend: 'memory', error: reason };
      }
    }
    const ids = await this.memory.rankWhenLoaded(vector, limit, scope);
    if (ids) return { ids, backend: 'memory' };
    const progress = this.memory.progress;
    return {
      ids: [],
      backend: 'memory',
      skipped: `the in-memory dense index is still loading${progress ? ` (${progress.loaded} of ${progress.total} leaves)` : ''}`,
    };
  }
}

function describeMaintenance(done: IndexMaintenance): string {
  const parts = [
    done.built ? `built in ${Math.round(done.buildMs)} ms` : '',
    done.swapped ? `dense epoch now ${done.epoch}` : '',
    done.dropped.length ? `dropped ${done.dropped.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}
