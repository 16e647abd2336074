import { Logger } from '@nestjs/common';
import { withTimeout } from '../../../common/with-timeout.js';
import { IngestQueue, IngestQueueEvents, IngestQueueHold, IngestTask, PermanentIngestError } from './ingest-queue.js';
import type { TraceCarrier } from '../../../observability/queue-spans.js';

/** Runs `run` after `ms`; returns what cancels it. */
export type Schedule = (run: () => void, ms: number) => () => void;

const scheduleWithTimer: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface InProcessIngestQueueOptions {
  /** The first retry's delay; each later one doubles it (BullMQ's exponential backoff). */
  backoffMs?: number;
  schedule?: Schedule;
}

interface QueuedJob {
  id: string;
  attempts: number;
  attemptsMade: number;
  state: 'waiting' | 'delayed' | 'active';
  /** Cancels the retry a delayed job waits for. */
  cancelRetry?: () => void;
  /** Removed while under way: not tried again. */
  removed?: boolean;
  carrier?: TraceCarrier;
}

/**
 * The ingest queue in this process's memory, for a single instance without
 * Redis (REDIS_URL=none). It holds the jobs it was given until they end;
 * what it loses when the process stops is still unfinished in PostgreSQL,
 * and the reconciler queues it again at the next start.
 */
export class InProcessIngestQueue implements IngestQueue {
  private readonly logger = new Logger('IngestJobs');
  private readonly jobs = new Map<string, QueuedJob>();
  /** Ids waiting for a worker slot, oldest first. */
  private waiting: string[] = [];
  /** The attempts under way, by job id. */
  private readonly active = new Map<string, Promise<void>>();
  private process: ((task: IngestTask) => Promise<unknown>) | null = null;
  private concurrency = 0;
  private stopped = false;
  private readonly backoffMs: number;
  private readonly schedule: Schedule;

  constructor(
    private readonly listeners: IngestQueueEvents,
    options: InProcessIngestQueueOptions = {},
  ) {
    this.backoffMs = options.backoffMs ?? 1000;
    this.schedule = options.schedule ?? scheduleWithTimer;
  }

  readonly system = 'in_process';

  add(id: string, attempts: number, carrier?: TraceCarrier): Promise<void> {
    if (this.jobs.has(id) || this.stopped) return Promise.resolve();
    this.jobs.set(id, { id, attempts: Math.max(1, attempts), attemptsMade: 0, state: 'waiting', carrier });
    this.waiting.push(id);
    this.listeners.moved(id);
    this.dispatch();
    return Promise.resolve();
  }

  remove(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (job?.state === 'active') {
      // An attempt cannot be taken back: it runs on, and ends the job whatever it gives.
      job.removed = true;
    } else if (job) {
      job.cancelRetry?.();
      this.jobs.delete(id);
      this.waiting = this.waiting.filter((waiting) => waiting !== id);
    }
    return Promise.resolve();
  }

  hold(id: string): Promise<IngestQueueHold> {
    // Jobs that ended are forgotten: a row still unfinished after its job ended here (its last write failed) is queued again.
    return Promise.resolve(this.jobs.has(id) ? 'held' : 'absent');
  }

  startWorker(process: (task: IngestTask) => Promise<unknown>, concurrency: number): void {
    this.process = process;
    this.concurrency = concurrency;
    this.dispatch();
  }

  async stopWorker(budgetMs: number): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) job.cancelRetry?.();
    if (this.active.size === 0) return;
    const running = Promise.allSettled(this.active.values());
    await withTimeout(running, budgetMs, () => new Error('ingest jobs did not finish in time')).catch((error: Error) => {
      this.logger.warn(`${error.message}: they start over when the service starts again`);
    });
  }

  close(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) job.cancelRetry?.();
    this.jobs.clear();
    this.waiting = [];
    return Promise.resolve();
  }

  private dispatch(): void {
    while (!this.stopped && this.process && this.active.size < this.concurrency && this.waiting.length > 0) {
      const job = this.jobs.get(this.waiting.shift()!);
      if (job) this.start(job, this.process);
    }
  }

  private start(job: QueuedJob, process: (task: IngestTask) => Promise<unknown>): void {
    job.state = 'active';
    const task: IngestTask = {
      id: job.id,
      attemptsMade: job.attemptsMade,
      maxAttempts: job.attempts,
      carrier: job.carrier,
      reportProgress: (progress) => Promise.resolve(this.listeners.progress(job.id, progress)),
    };
    const attempt = Promise.resolve()
      .then(() => process(task))
      .then(
        () => this.end(job),
        (error: unknown) => this.attemptFailed(job, error),
      )
      .finally(() => {
        this.active.delete(job.id);
        this.dispatch();
      });
    this.active.set(job.id, attempt);
    this.listeners.moved(job.id);
  }

  private attemptFailed(job: QueuedJob, error: unknown): void {
    job.attemptsMade += 1;
    if (error instanceof PermanentIngestError || job.attemptsMade >= job.attempts || job.removed || this.stopped) return this.end(job);
    job.state = 'delayed';
    job.cancelRetry = this.schedule(
      () => {
        job.cancelRetry = undefined;
        job.state = 'waiting';
        this.waiting.push(job.id);
        this.listeners.moved(job.id);
        this.dispatch();
      },
      this.backoffMs * 2 ** (job.attemptsMade - 1),
    );
    this.listeners.moved(job.id);
  }

  private end(job: QueuedJob): void {
    this.jobs.delete(job.id);
    this.listeners.moved(job.id);
  }
}
