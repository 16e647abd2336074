import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { DataSource, EntityManager } from 'typeorm';
import { CodedError } from '../../../common/coded-error.js';
import { withTimeout } from '../../../common/with-timeout.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { pgErrorCode } from '../../../database/sql.js';
import { IndexStateRepository } from '../../index/index-state.repository.js';
import { documentNameProblem, InvalidDocumentNameError } from '../document-name.js';
import { checkDocument } from '../document-parser.js';
import { DenseRecall } from '../../index/dense/dense-recall.service.js';
import { DocumentRemovedError, DocumentsService, KnowledgeDocument } from '../documents.service.js';
import { IngestJob, isFinished } from './ingest-job.js';
import { CollectionNotFoundError } from '../../collections/collection-access.service.js';
import { AttemptSupersededError, progressReporter } from './ingest-attempt.js';
import { IngestJobWatchers } from './ingest-job-watchers.js';
import { IngestJobsRepository } from './ingest-jobs.repository.js';
import { DEFAULT_COLLECTION_ID } from '../../collections/collection.js';

/** What an upload became: a queued job, or the document already stored with the same content. */
export type Submission = { job: IngestJob; document: null } | { job: null; document: KnowledgeDocument };

/** What a DELETE of a document id removed: the stored document, and (or) the unfinished ingest job that was to store it. */
export interface DocumentDeletion {
  document: boolean;
  jobCancelled: boolean;
}

/** Jobs the reconciler looks at per round. */
const RECONCILE_BATCH = 100;

/**
 * Ingest as jobs. An upload is checked (name, type, text encoding), stored
 * in `knowledge_ingest_jobs` and answered at once; a BullMQ queue on the
 * service's Redis schedules it, and a worker on any instance
 * (KNOWLEDGE_INGEST_CONCURRENCY jobs at a time) runs DocumentsService.ingest
 * on it, reporting progress. A job that fails for a passing reason is tried
 * again (KNOWLEDGE_INGEST_ATTEMPTS, exponential backoff); one whose worker
 * died is taken over by another instance once its lock lapses
 * (KNOWLEDGE_INGEST_LOCK_MS). PostgreSQL holds each job's state, so an
 * acknowledged upload is never lost: jobs that the queue lost (a Redis
 * restart, Redis away when the upload was stored) are queued again by the
 * reconciler every instance runs. Deleting a document (`deleteDocument`)
 * cancels its unfinished job, whatever its stage: the job ends `cancelled`
 * and never stores the document again.
 */
@Injectable()
export class IngestJobs implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(IngestJobs.name);
  private readonly connections: Redis[] = [];
  private queue!: Queue;
  private events!: QueueEvents;
  private worker: Worker | null = null;
  private readonly watchers = new IngestJobWatchers((id) => this.find(id));
  private reconciler: NodeJS.Timeout | undefined;
  private redisDown = false;
  private reconciling = false;
  private buildingPending = false;
  /** Jobs this instance's worker is running. */
  private running = 0;
  private readonly jobs: IngestJobsRepository;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly documents: DocumentsService,
    private readonly dense: DenseRecall,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.jobs = new IngestJobsRepository(dataSource);
  }

  async onModuleInit(): Promise<void> {
    const deployment = await new IndexStateRepository(this.dataSource).deploymentId();
    // Deployments (and test runs) sharing one Redis keep their own queues: the queue is named after the database's own id.
    const queueName = `ingest-${deployment}`;
    const { ingestConcurrency, ingestLockMs } = this.config.knowledge;
    const base = { prefix: 'rag' };
    // Adding a job fails at once while Redis is away (the reconciler queues it later); the worker waits for Redis.
    this.queue = new Queue(queueName, { ...base, connection: this.redis({ enableOfflineQueue: false, maxRetriesPerRequest: 1 }) });
    this.queue.on('error', (error) => this.onRedisError(error));
    this.events = new QueueEvents(queueName, { ...base, connection: this.redis() });
    this.events.on('error', (error) => this.onRedisError(error));
    for (const event of ['active', 'completed', 'failed', 'waiting', 'delayed'] as const) {
      this.events.on(event, ({ jobId }: { jobId: string }) => void this.watchers.refresh(jobId));
    }
    this.events.on('progress', ({ jobId, data }: { jobId: string; data: unknown }) => this.watchers.onProgressEvent(jobId, data));
    if (ingestConcurrency > 0) {
      this.worker = new Worker(queueName, (job) => this.process(job), {
        ...base,
        connection: this.redis(),
        concurrency: ingestConcurrency,
        lockDuration: ingestLockMs,
        stalledInterval: ingestLockMs,
        // A job whose worker died is taken over as often as it may be tried.
        maxStalledCount: this.config.knowledge.ingestAttempts,
      });
      this.worker.on('error', (error) => this.onRedisError(error));
    }
    this.reconciler = setInterval(() => void this.reconcile(), ingestLockMs);
    this.reconciler.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.reconciler);
    this.watchers.stop();
    if (!this.worker) return;
    // Jobs under way finish while they can; past the shutdown budget they are left to another instance (their lock lapses).
    const worker = this.worker;
    if (this.running === 0) {
      // Nothing to finish: a graceful close would only wait for Redis to answer its blocking read.
      await withTimeout(worker.close(true), 1000, () => new Error('timeout')).catch(() => undefined);
      return;
    }
    await withTimeout(worker.close(), this.config.shutdownTimeoutMs, () => new Error('ingest jobs did not finish in time')).catch((error: Error) => {
      this.logger.warn(`${error.message}: another instance takes them over`);
      void worker.close(true).catch(() => undefined);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    // Closing waits for Redis; an unreachable one must not hold the shutdown.
    const closing = [this.events.close(), this.queue.close()].map((p) => withTimeout(p, 1000, () => new Error('timeout')).catch(() => undefined));
    await Promise.all(closing);
    for (const connection of this.connections) connection.disconnect();
  }

  /**
   * Checks and stores an upload for the collection (unset: `default`) and queues its job. Throws the coded errors of a
   * bad name (400), type (415) or text (422); content the collection stores already comes back as that document, without a job.
   */
  async submit(filename: string, data: Buffer, createdBy: string, collectionId = DEFAULT_COLLECTION_ID): Promise<Submission> {
    const nameProblem = documentNameProblem(filename);
    if (nameProblem) throw new InvalidDocumentNameError(nameProblem);
    checkDocument(filename, data);
    const existing = await this.documents.findByContent(data, collectionId);
    if (existing) return { job: null, document: existing };
    const id = randomUUID();
    const job = await this.jobs.insert({ id, collectionId, filename, content: data, createdBy });
    if (!job) throw new CollectionNotFoundError(collectionId);
    await this.enqueue(id).catch((error: Error) => this.logger.warn(`ingest job ${id} is stored but not queued yet (${error.message}); it is queued when Redis answers`));
    return { job, document: null };
  }

  find(id: string): Promise<IngestJob | null> {
    return this.jobs.find(id);
  }

  /** Takes jobs whose rows are gone (their collection was deleted) off the queue, best effort: one left there finds no row and stores nothing. */
  async dropFromQueue(ids: readonly string[]): Promise<void> {
    const timeout = Math.max(this.config.redis.commandTimeoutMs, 1000);
    for (const id of ids) {
      await withTimeout(this.queue.remove(id), timeout, () => new Error('Redis did not answer in time')).catch(() => undefined);
    }
  }

  /** The newest jobs first. */
  list(limit: number): Promise<IngestJob[]> {
    return this.jobs.list(limit);
  }

  /**
   * Deletes the collection's (unset: `default`'s) document `id` and cancels its unfinished ingest job of that id (a job's id
   * is its document's), in one transaction: whatever stage the job is at, it ends `cancelled` and never stores the document
   * again. The job's row lock orders this against the job's own claim of its document (see `attempt`): a delete either
   * comes first (the job's transaction rolls back) or removes the document the job has just committed.
   */
  async deleteDocument(id: string, collectionId = DEFAULT_COLLECTION_ID): Promise<DocumentDeletion> {
    return this.dataSource.transaction(async (manager) => {
      const jobCancelled = await this.jobs.cancelUnfinished(manager, id, collectionId);
      const document = await this.documents.remove(id, manager, collectionId);
      return { document, jobCancelled };
    });
  }

  /**
   * Calls `listener` with the job each time its state or progress moves
   * (from the queue's events, and from its row at least every second), until
   * the returned function is called. A job whose row is gone (its collection
   * was deleted) ends `cancelled`. `known`: the job as the caller read it.
   */
  watch(id: string, listener: (job: IngestJob) => void, known?: IngestJob): () => void {
    return this.watchers.watch(id, listener, known);
  }

  /** The job once it has completed, failed or been cancelled; rejects when `signal` aborts first. `known`: the job as submitted. */
  waitUntilFinished(id: string, signal?: AbortSignal, known?: IngestJob): Promise<IngestJob> {
    return new Promise<IngestJob>((resolve, reject) => {
      const stop = this.watch(
        id,
        (job) => {
          if (!isFinished(job)) return;
          finish();
          resolve(job);
        },
        known,
      );
      const onAbort = () => {
        finish();
        reject(new Error('no longer waited for'));
      };
      const finish = () => {
        stop();
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.watchers.refresh(id);
    });
  }

  private redis(options: { enableOfflineQueue?: boolean; maxRetriesPerRequest?: number | null } = {}): Redis {
    const connection = new Redis(this.config.redis.url, {
      // BullMQ's blocking commands must wait out an outage rather than fail.
      maxRetriesPerRequest: null,
      connectTimeout: Math.max(this.config.redis.commandTimeoutMs, 500),
      retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2000),
      ...options,
    });
    connection.on('error', (error) => this.onRedisError(error));
    connection.on('ready', () => {
      if (this.redisDown) this.logger.log('Redis answers again: ingest jobs go on');
      this.redisDown = false;
    });
    this.connections.push(connection);
    return connection;
  }

  private onRedisError(error: Error): void {
    if (this.redisDown) return;
    this.redisDown = true;
    this.logger.warn(`ingest queue: Redis unavailable (${error.message}); uploads are stored and queued when it answers`);
  }

  private enqueue(id: string): Promise<unknown> {
    const attempts = this.config.knowledge.ingestAttempts;
    const adding = this.queue.add(
      'ingest',
      { id },
      {
        jobId: id,
        attempts,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 24 * 3600, count: 1000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    );
    return withTimeout(adding, Math.max(this.config.redis.commandTimeoutMs, 1000), () => new Error('Redis did not answer in time'));
  }

  /** The worker's body: one attempt at a job. */
  private async process(job: Job): Promise<{ document_id: string | null; duplicate: boolean } | null> {
    this.running += 1;
    try {
      return await this.attempt(job);
    } finally {
      this.running -= 1;
    }
  }

  private async attempt(job: Job): Promise<{ document_id: string | null; duplicate: boolean } | null> {
    const id = String(job.id);
    // The attempt's number guards every later write: a worker that lost its lock (and its job to another worker) and
    // carries on cannot overwrite what the other one recorded. A cancelled job (its document deleted) is not taken.
    const row = await this.jobs.take(id);
    if (!row) {
      if (!(await this.jobs.exists(id))) throw new UnrecoverableError(`ingest job ${id} has no stored upload`);
      return null; // ended already: cancelled, or by an earlier attempt that the queue did not hear of
    }
    // An earlier attempt stored the document and failed after its commit: only the completion is left to write.
    if (row.stored || !row.content) return this.complete(id, row.attempt, { document_id: row.stored, duplicate: false });
    const onProgress = progressReporter(job, (stage, done, total) => this.jobs.recordProgress(id, row.attempt, stage, done, total));
    let result: { document_id: string | null; duplicate: boolean };
    try {
      const ingested = await this.documents.ingest(row.filename, row.content, row.created_by, {
        collectionId: row.collection_id,
        documentId: id,
        onProgress,
        // Uploads of many large files (a folder) build the dense index once, after the last of them.
        deferIndexBuild: () => this.otherJobsQueued(id),
        beforeCommit: (manager) => this.claimDocument(manager, id, row.attempt),
      });
      result = { document_id: ingested.document.id, duplicate: ingested.duplicate };
    } catch (error) {
      if (error instanceof AttemptSupersededError) return null;
      if (error instanceof DocumentRemovedError) {
        // Stored, then deleted before the job ended: the delete cancelled the job, and nothing is stored again.
        result = { document_id: null, duplicate: false };
      } else if (await this.claimedDocument(id)) {
        // A failure after the document's commit does not undo it: the job completes (a retry, if this write fails too).
        result = { document_id: id, duplicate: false };
      } else {
        throw await this.recordFailure(job, row.attempt, error);
      }
    }
    return this.complete(id, row.attempt, result);
  }

  /**
   * In the document's transaction, just before it commits: the job (still
   * this attempt's, not cancelled) records its document and drops the
   * upload, so no later attempt can store it again. Locking the job's row
   * here orders the commit against a delete (`deleteDocument`).
   */
  private async claimDocument(manager: EntityManager, id: string, attempt: number): Promise<void> {
    if (!(await this.jobs.claimDocument(manager, id, attempt))) throw new AttemptSupersededError(id);
  }

  /** Whether the job's document is stored (claimed by an attempt in its commit); false when that cannot be read. */
  private async claimedDocument(id: string): Promise<boolean> {
    return this.jobs.hasClaimedDocument(id).catch(() => false);
  }

  /**
   * The job's completion. A job cancelled meanwhile stays cancelled (the
   * update matches no row); a document deleted since (a duplicate's, say)
   * is recorded as none rather than failing on the foreign key.
   */
  private async complete(id: string, attempt: number, result: { document_id: string | null; duplicate: boolean }): Promise<{ document_id: string | null; duplicate: boolean }> {
    await this.jobs.complete(id, attempt, result);
    return result;
  }

  /** Whether uploads other than `id` wait for a worker: a bulk load then leaves its index build to them. */
  private otherJobsQueued(id: string): Promise<boolean> {
    return this.jobs.otherJobsQueued(id);
  }

  /** Writes a failed attempt to the job's row; returns what the worker throws (UnrecoverableError: no retry). */
  private async recordFailure(job: Job, attempt: number, error: unknown): Promise<Error> {
    const id = String(job.id);
    // Bad content fails the same way every time; anything else (storage, an embeddings endpoint) may pass.
    const permanent = error instanceof CodedError && error.httpStatus < 500;
    const final = permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const code = error instanceof CodedError ? error.code : 'ingest_failed';
    const message =
      error instanceof CodedError
        ? error.message
        : pgErrorCode(error)
          ? 'the ingest failed: the database did not accept the document (see the service log)'
          : 'the ingest failed (see the service log)';
    if (!permanent) this.logger.warn({ err: error }, `ingest job ${id}, attempt ${attempt}: ${message}`);
    await this.jobs
      .recordFailure(id, attempt, { final, code, message })
      .catch((writeError: Error) => this.logger.warn(`ingest job ${id}: its failure could not be recorded (${writeError.message})`));
    if (permanent) return new UnrecoverableError(message);
    return error instanceof Error ? error : new Error(String(error));
  }

  /**
   * Jobs PostgreSQL says are unfinished but that have not moved for a lock
   * period: queued again when the queue no longer has them, or when the
   * queue failed them while their worker could not record it (a job whose
   * failure was recorded as final is `failed` in PostgreSQL, and left alone).
   */
  private async reconcile(): Promise<void> {
    void this.finishPendingBulkLoads();
    if (this.reconciling) return;
    this.reconciling = true;
    try {
      const ids = await this.jobs.idleUnfinished(this.config.knowledge.ingestLockMs / 1000, RECONCILE_BATCH);
      // A Redis that does not answer (stopped, partitioned) must not hold the next rounds.
      const inTime = <T>(operation: Promise<T>) => withTimeout(operation, Math.max(this.config.redis.commandTimeoutMs, 1000), () => new Error('Redis did not answer in time'));
      for (const id of ids) {
        const queued = await inTime(this.queue.getJob(id));
        if (!queued) {
          await this.enqueue(id);
          this.logger.log(`ingest job ${id} was not in the queue: queued again`);
        } else if ((await inTime(queued.getState())) === 'failed') {
          // The queue gave up, but no attempt could record a final failure (PostgreSQL was away: every write failed).
          // The upload is still stored: it starts over rather than being lost to an outage.
          await inTime(queued.remove());
          await this.enqueue(id);
          this.logger.log(`ingest job ${id} failed in the queue while its failures could not be recorded: queued again`);
        }
      }
    } catch (error) {
      this.logger.debug?.(`ingest reconciler: ${(error as Error).message}`);
    } finally {
      this.reconciling = false;
    }
  }

  /**
   * A bulk load that left its index build to a later job, when none built it
   * (the later ones failed or were no bulk loads, or their instance died):
   * built once bulk loads have paused for a lock period.
   */
  private async finishPendingBulkLoads(): Promise<void> {
    if (this.buildingPending) return;
    this.buildingPending = true;
    try {
      await this.dense.finishPendingBulkLoads(this.config.knowledge.ingestLockMs);
    } catch (error) {
      this.logger.warn(`the dense index of bulk-loaded leaves was not built (${(error as Error).message}); tried again later`);
    } finally {
      this.buildingPending = false;
    }
  }
}
