import type { IngestStage } from '../documents.service.js';
import { IngestJob, isFinished } from './ingest-job.js';

type JobListener = (job: IngestJob) => void;

/** How often a watched job's row is read again, whatever the queue's events say (they may be missed while Redis is away). */
export const WATCH_POLL_MS = 1000;
const STAGE_ORDER: readonly IngestStage[] = ['parsing', 'embedding', 'storing', 'indexing'];

/**
 * The listeners of watched jobs, fed from the queue's events (`refresh`,
 * `onProgressEvent`) and from the job's row, read at least every
 * WATCH_POLL_MS, in the order an attempt moves.
 */
export class IngestJobWatchers {
  private readonly listeners = new Map<string, Set<JobListener>>();
  private readonly pollers = new Map<string, NodeJS.Timeout>();
  /** The last state sent to a watched job's listeners. */
  private readonly lastSeen = new Map<string, IngestJob>();

  constructor(private readonly find: (id: string) => Promise<IngestJob | null>) {}

  /** Stops every row poll (at shutdown). */
  stop(): void {
    for (const timer of this.pollers.values()) clearInterval(timer);
    this.pollers.clear();
  }

  /**
   * Calls `listener` with the job each time its state or progress moves
   * (from the queue's events, and from its row at least every second), until
   * the returned function is called. `known`: the job as the caller last read it.
   */
  watch(id: string, listener: JobListener, known?: IngestJob): () => void {
    if (known && !this.lastSeen.has(id)) this.lastSeen.set(id, known);
    let set = this.listeners.get(id);
    if (!set) {
      set = new Set();
      this.listeners.set(id, set);
      const poller = setInterval(() => void this.refresh(id), WATCH_POLL_MS);
      poller.unref();
      this.pollers.set(id, poller);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(id) === set) {
        this.listeners.delete(id);
        this.lastSeen.delete(id);
        clearInterval(this.pollers.get(id));
        this.pollers.delete(id);
      }
    };
  }

  onProgressEvent(id: string, data: unknown): void {
    const last = this.lastSeen.get(id);
    const progress = data as { stage?: IngestStage; done?: number; total?: number } | null;
    if (!last || last.status !== 'active' || !progress?.stage) return void this.refresh(id);
    this.emit({ ...last, stage: progress.stage, progress: { done: progress.done ?? 0, total: progress.total ?? 0 } });
  }

  /**
   * Reads the job's row and tells its listeners. A row that is gone was
   * deleted with its collection (which cancels its unfinished jobs): the job
   * is told as it was last seen, cancelled, so that nobody waits for it forever.
   */
  async refresh(id: string): Promise<void> {
    if (!this.listeners.has(id)) return;
    const job = await this.find(id).catch(() => undefined);
    if (job) return this.emit(job);
    const last = this.lastSeen.get(id);
    if (job === null && last && !isFinished(last)) {
      const now = new Date().toISOString();
      this.emit({ ...last, status: 'cancelled', stage: null, error: null, document_id: null, duplicate: null, updated_at: now, finished_at: now });
    }
  }

  private emit(job: IngestJob): void {
    if (!this.listeners.has(job.id)) return;
    const last = this.lastSeen.get(job.id);
    // Events and row reads arrive in any order, and the row's progress lags the events': an attempt's stage never goes back.
    if (last && job.status === 'active' && last.status === 'active' && last.attempts === job.attempts) {
      const order = (stage: IngestStage | null) => (stage ? STAGE_ORDER.indexOf(stage) : -1);
      const behind = order(job.stage) < order(last.stage) || (job.stage === last.stage && job.progress.done < last.progress.done);
      if (behind) job = { ...job, stage: last.stage, progress: last.progress };
    }
    this.lastSeen.set(job.id, job);
    for (const listener of this.listeners.get(job.id) ?? []) listener(job);
  }
}
