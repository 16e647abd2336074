import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ioredisTarget } from '../../../common/redis-client.js';
import { RedisKeys } from '../../../common/redis-keys.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { IndexStateRepository } from '../../index/index-state.repository.js';
import { documentNameProblem, InvalidDocumentNameError } from '../document-name.js';
import { checkDocument } from '../document-parser.js';
import { DenseRecall } from '../../index/dense/dense-recall.service.js';
import { DocumentsService, KnowledgeDocument } from '../documents.service.js';
import { IngestJob, isFinished } from './ingest-job.js';
import { CollectionNotFoundError } from '../../collections/collection-access.service.js';
import { IngestAttempts } from './ingest-attempt.js';
import { IngestJobWatchers } from './ingest-job-watchers.js';
import { IngestJobsRepository } from './ingest-jobs.repository.js';
import { DEFAULT_COLLECTION_ID } from '../../collections/collection.js';
import { BullmqIngestQueue } from './bullmq-ingest-queue.js';
import { InProcessIngestQueue } from './in-process-ingest-queue.js';
import { IngestQueue, IngestQueueEvents } from './ingest-queue.js';
import { Metrics } from '../../../observability/metrics.js';
import { traceJobProcess, traceJobSend } from '../../../observability/queue-spans.js';

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
 * in `knowledge_ingest_jobs` and answered at once; a queue schedules it,
 * and a worker (KNOWLEDGE_INGEST_CONCURRENCY jobs at a time) runs
 * DocumentsService.ingest on it (IngestAttempts), reporting progress. A job
 * that fails for a passing reason is tried again (KNOWLEDGE_INGEST_ATTEMPTS,
 * exponential backoff). The queue is a BullMQ one on the service's Redis,
 * whose workers on every instance take jobs (a job whose worker died is
 * taken over once its lock lapses, KNOWLEDGE_INGEST_LOCK_MS), or, without
 * Redis (REDIS_URL=none, one instance), one in this process's memory.
 * PostgreSQL holds each job's state, so an acknowledged upload is never
 * lost: jobs that the queue lost (a Redis restart, Redis away when the
 * upload was stored, the process stopped) are queued again by the
 * reconciler every instance runs. Deleting a document (`deleteDocument`)
 * cancels its unfinished job, whatever its stage: the job ends `cancelled`
 * and never stores the document again.
 */
/** The ingest queue's name in traces (`messaging.destination.name`). */
const INGEST_QUEUE = 'ingest';

@Injectable()
export class IngestJobs implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(IngestJobs.name);
  private queue!: IngestQueue;
  private readonly watchers = new IngestJobWatchers((id) => this.find(id));
  private reconciler: NodeJS.Timeout | undefined;
  private reconciling = false;
  /** The reconciler's build of bulk-loaded leaves in flight (one at a time), which shutdown stops and waits for. */
  private pendingBuild?: Promise<void>;
  private readonly stopping = new AbortController();
  private readonly jobs: IngestJobsRepository;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly documents: DocumentsService,
    private readonly dense: DenseRecall,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.jobs = new IngestJobsRepository(dataSource);
    metrics.gauge('knowledge_ingest_queue_depth', 'Ingest jobs not ended (all instances: read from PostgreSQL at each scrape), by status (queued, active)', ['status'], async () =>
      (await this.jobs.unfinishedCounts()).map(({ status, count }) => [{ status }, count]),
    );
  }

  async onModuleInit(): Promise<void> {
    const { ingestConcurrency, ingestLockMs, ingestAttempts } = this.config.knowledge;
    const events: IngestQueueEvents = {
      moved: (id) => void this.watchers.refresh(id),
      progress: (id, progress) => this.watchers.onProgressEvent(id, progress),
    };
    const redisUrl = this.config.redis.url;
    if (redisUrl === null) {
      this.queue = new InProcessIngestQueue(events);
    } else {
      const deployment = await new IndexStateRepository(this.dataSource).deploymentId();
      const { commandTimeoutMs } = this.config.redis;
      const options = {
        redis: ioredisTarget(this.config.redis, redisUrl),
        prefix: new RedisKeys(this.config.redis).queuePrefix,
        name: `ingest-${deployment}`,
        commandTimeoutMs,
        lockMs: ingestLockMs,
        maxStalledCount: ingestAttempts,
      };
      this.queue = new BullmqIngestQueue(options, events);
    }
    if (ingestConcurrency > 0) {
      const attempts = new IngestAttempts(this.jobs, this.documents, (outcome) => this.metrics.ingestFinished(outcome));
      const queue = this.queue;
      this.queue.startWorker(
        (task) => traceJobProcess({ system: queue.system, queue: INGEST_QUEUE, jobId: task.id, attempt: task.attemptsMade + 1, carrier: task.carrier }, () => attempts.run(task)),
        ingestConcurrency,
      );
    }
    // Without Redis this is the only instance: every unfinished job was left by a process that stopped, and starts over now.
    if (redisUrl === null) await this.requeueLost(0);
    this.reconciler = setInterval(() => void this.reconcile(), ingestLockMs);
    this.reconciler.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.reconciler);
    // An index build the reconciler started stops (cancelled) before the instance is done: nothing of it runs on behind a closed app.
    this.stopping.abort();
    await this.pendingBuild;
    this.watchers.stop();
    // Half the shutdown's budget: what comes after (the pool, the embedded database) must still close before its timer fires.
    await this.queue.stopWorker(Math.floor(this.config.shutdownTimeoutMs / 2));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
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
    await this.enqueue(id).catch((error: Error) => this.logger.warn(`ingest job ${id} is stored but not queued yet (${error.message}); it is queued when the queue answers`));
    return { job, document: null };
  }

  find(id: string): Promise<IngestJob | null> {
    return this.jobs.find(id);
  }

  /** Takes jobs whose rows are gone (their collection was deleted) off the queue, best effort: one left there finds no row and stores nothing. */
  async dropFromQueue(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) this.metrics.ingestFinished('cancelled', ids.length);
    for (const id of ids) await this.queue.remove(id).catch(() => undefined);
  }

  /** The newest jobs first. */
  list(limit: number): Promise<IngestJob[]> {
    return this.jobs.list(limit);
  }

  /**
   * Deletes the collection's (unset: `default`'s) document `id` and cancels its unfinished ingest job of that id (a job's id
   * is its document's), in one transaction: whatever stage the job is at, it ends `cancelled` and never stores the document
   * again. The job's row lock orders this against the job's own claim of its document (see `IngestAttempts`): a delete either
   * comes first (the job's transaction rolls back) or removes the document the job has just committed.
   */
  async deleteDocument(id: string, collectionId = DEFAULT_COLLECTION_ID): Promise<DocumentDeletion> {
    const deletion = await this.dataSource.transaction(async (manager) => {
      const jobCancelled = await this.jobs.cancelUnfinished(manager, id, collectionId);
      const document = await this.documents.remove(id, manager, collectionId);
      return { document, jobCancelled };
    });
    if (deletion.jobCancelled) this.metrics.ingestFinished('cancelled');
    return deletion;
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

  private enqueue(id: string): Promise<void> {
    return traceJobSend({ system: this.queue.system, queue: INGEST_QUEUE, jobId: id }, (carrier) => this.queue.add(id, this.config.knowledge.ingestAttempts, carrier));
  }

  private async reconcile(): Promise<void> {
    this.pendingBuild ??= this.finishPendingBulkLoads().finally(() => (this.pendingBuild = undefined));
    await this.requeueLost(this.config.knowledge.ingestLockMs / 1000);
  }

  /**
   * Jobs PostgreSQL says are unfinished but that have not moved for
   * `idleSeconds` (a lock period): queued again when the queue no longer has
   * them, or when the queue failed them while their worker could not record
   * it (a job whose failure was recorded as final is `failed` in PostgreSQL,
   * and left alone).
   */
  private async requeueLost(idleSeconds: number): Promise<void> {
    if (this.reconciling) return;
    this.reconciling = true;
    try {
      const ids = await this.jobs.idleUnfinished(idleSeconds, RECONCILE_BATCH);
      for (const id of ids) {
        const hold = await this.queue.hold(id);
        if (hold === 'absent') {
          await this.enqueue(id);
          this.logger.log(`ingest job ${id} was not in the queue: queued again`);
        } else if (hold === 'failed') {
          // The queue gave up, but no attempt could record a final failure (PostgreSQL was away: every write failed).
          // The upload is still stored: it starts over rather than being lost to an outage.
          await this.queue.remove(id);
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
    try {
      await this.dense.finishPendingBulkLoads(this.config.knowledge.ingestLockMs, this.stopping.signal);
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      this.logger.warn(`the dense index of bulk-loaded leaves was not built (${(error as Error).message}); tried again later`);
    }
  }
}
