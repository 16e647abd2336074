import type { Job } from 'bullmq';
import type { IngestStage } from '../documents.service.js';
import { WATCH_POLL_MS } from './ingest-job-watchers.js';

/** An attempt whose job is no longer its own: cancelled by a delete, or taken over by a later attempt. It stops, quietly. */
export class AttemptSupersededError extends Error {
  constructor(id: string) {
    super(`ingest job ${id} was cancelled or taken over`);
    this.name = 'AttemptSupersededError';
  }
}

/** Progress events to the queue at most this often per job; the job row at most every WATCH_POLL_MS. */
const PROGRESS_EVENT_MS = 200;

/**
 * Progress to the queue's events (for watchers on every instance) and, less
 * often, to the job's row (`recordRow`: false when the job is no longer the
 * attempt's). A write that fails does not fail the ingest; one that finds
 * the job no longer this attempt's (cancelled, taken over) stops it.
 */
export function progressReporter(
  job: Job,
  recordRow: (stage: IngestStage, done: number, total: number) => Promise<boolean>,
): (stage: IngestStage, done: number, total: number) => Promise<void> {
  let lastEvent = 0;
  let lastRow = 0;
  let lastStage: IngestStage | null = null;
  return async (stage, done, total) => {
    const now = Date.now();
    const stageChanged = stage !== lastStage;
    const last = done >= total;
    lastStage = stage;
    if (stageChanged || last || now - lastEvent >= PROGRESS_EVENT_MS) {
      lastEvent = now;
      void job.updateProgress({ stage, done, total }).catch(() => undefined);
    }
    if (stageChanged || now - lastRow >= WATCH_POLL_MS) {
      lastRow = now;
      const ownJob = await recordRow(stage, done, total).catch(() => null);
      // The job was cancelled (its document deleted) or taken over: this attempt stops here. Indexing comes after the
      // document's commit: the build it owes other bulk-loaded leaves still runs.
      if (ownJob === false && stage !== 'indexing') throw new AttemptSupersededError(String(job.id));
    }
  };
}
