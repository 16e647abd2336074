import type { TraceCarrier } from '../../../observability/queue-spans.js';

/** One attempt at a queued ingest job, as a queue hands it to its worker. */
export interface IngestTask {
  /** The job's id (its row's in `knowledge_ingest_jobs`). */
  readonly id: string;
  /** Attempts that ended before this one. */
  readonly attemptsMade: number;
  /** Attempts the job may have in all. */
  readonly maxAttempts: number;
  /** The trace context of the request that queued the job (empty with tracing off). */
  readonly carrier?: TraceCarrier;
  /** Tells the job's watchers (on every instance the queue reaches) how far the attempt is; best effort. */
  reportProgress(progress: { stage: string; done: number; total: number }): Promise<void>;
}

/** Thrown by a worker's process function: the job fails for good, whatever attempts it has left. */
export class PermanentIngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentIngestError';
  }
}

/** What a queue tells the job's watchers. */
export interface IngestQueueEvents {
  /** The job was queued, started, completed, failed or delayed for a retry: its row is worth reading again. */
  moved(id: string): void;
  /** An attempt's progress, as `IngestTask.reportProgress` sent it. */
  progress(id: string, progress: unknown): void;
}

/** What the queue knows of a job, for the reconciler: `absent` and `failed` jobs are queued again when their row is unfinished. */
export type IngestQueueHold = 'absent' | 'failed' | 'held';

/**
 * Schedules ingest jobs: the queue holds job ids, its worker runs them
 * (with retries) through the process function it was started with.
 * PostgreSQL, not the queue, holds each job's state and upload.
 */
export interface IngestQueue {
  /** What runs the queue, as traces name it (`messaging.system`). */
  readonly system: string;
  /** Queues job `id` (nothing when the queue holds it already) with the trace context to continue; rejects when the queue cannot take it now. */
  add(id: string, attempts: number, carrier?: TraceCarrier): Promise<void>;
  /** Takes the job off the queue (best effort). */
  remove(id: string): Promise<void>;
  hold(id: string): Promise<IngestQueueHold>;
  /** Starts running jobs, `concurrency` at a time. A PermanentIngestError ends a job at once; other errors try it again. */
  startWorker(process: (task: IngestTask) => Promise<unknown>, concurrency: number): void;
  /** Stops taking jobs; attempts under way get up to `budgetMs` to end (the others are left to the reconciler). */
  stopWorker(budgetMs: number): Promise<void>;
  /** Releases what the queue holds (connections, timers); after stopWorker. */
  close(): Promise<void>;
}
