import { Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CodedError } from '../../../common/coded-error.js';
import { pgErrorCode } from '../../../database/sql.js';
import { DocumentRemovedError, DocumentsService, IngestProgress, IngestStage } from '../documents.service.js';
import { WATCH_POLL_MS } from './ingest-job-watchers.js';
import { IngestJobsRepository } from './ingest-jobs.repository.js';
import { IngestTask, PermanentIngestError } from './ingest-queue.js';

/** An attempt whose job is no longer its own: cancelled by a delete, or taken over by a later attempt. It stops, quietly. */
export class AttemptSupersededError extends Error {
  constructor(id: string) {
    super(`ingest job ${id} was cancelled or taken over`);
    this.name = 'AttemptSupersededError';
  }
}

/** What an attempt that ended the job recorded. */
export type IngestOutcome = { document_id: string | null; duplicate: boolean };

/** Progress events to the queue at most this often per job; the job row at most every WATCH_POLL_MS. */
const PROGRESS_EVENT_MS = 200;

/**
 * Progress to the queue's events (for watchers on every instance) and, less
 * often, to the job's row (`recordRow`: false when the job is no longer the
 * attempt's). A write that fails does not fail the ingest; one that finds
 * the job no longer this attempt's (cancelled, taken over) stops it.
 */
export function progressReporter(
  task: Pick<IngestTask, 'id' | 'reportProgress'>,
  recordRow: (stage: IngestStage, done: number, total: number) => Promise<boolean>,
): IngestProgress {
  let lastEvent = 0;
  let lastRow = 0;
  let lastStage: IngestStage | null = null;
  return async (stage, done, total, where) => {
    const now = Date.now();
    const stageChanged = stage !== lastStage;
    const last = done >= total;
    lastStage = stage;
    if (stageChanged || last || now - lastEvent >= PROGRESS_EVENT_MS) {
      lastEvent = now;
      void task.reportProgress({ stage, done, total }).catch(() => undefined);
    }
    // Inside the document's transaction the row is not written (a write on another connection would wait for the
    // transaction on the embedded database); the queue's events carry the progress, and the commit checks the claim.
    if (!where?.inTransaction && (stageChanged || now - lastRow >= WATCH_POLL_MS)) {
      lastRow = now;
      const ownJob = await recordRow(stage, done, total).catch(() => null);
      // The job was cancelled (its document deleted) or taken over: this attempt stops here. Indexing comes after the
      // document's commit: the build it owes other bulk-loaded leaves still runs.
      if (ownJob === false && stage !== 'indexing') throw new AttemptSupersededError(task.id);
    }
  };
}

/**
 * One attempt at an ingest job, whichever queue runs it: takes the job's
 * row (numbering the attempt), ingests its upload, and records how it
 * ended. The attempt's number guards every write: an attempt that lost its
 * job (to a later attempt, or to a delete) cannot overwrite what was recorded since.
 */
export class IngestAttempts {
  private readonly logger = new Logger('IngestJobs');

  constructor(
    private readonly jobs: IngestJobsRepository,
    private readonly documents: DocumentsService,
    /** Told how each attempt that ended the job, or failed, went. */
    private readonly onOutcome: (outcome: 'completed' | 'failed' | 'retried') => void = () => undefined,
  ) {}

  /** The queue's process function: null when the job had ended already (or is no longer this attempt's). */
  async run(task: IngestTask): Promise<IngestOutcome | null> {
    const { id } = task;
    // A cancelled job (its document deleted) is not taken.
    const row = await this.jobs.take(id);
    if (!row) {
      if (!(await this.jobs.exists(id))) throw new PermanentIngestError(`ingest job ${id} has no stored upload`);
      return null; // ended already: cancelled, or by an earlier attempt that the queue did not hear of
    }
    // An earlier attempt stored the document and failed after its commit: only the completion is left to write.
    if (row.stored || !row.content) return this.complete(id, row.attempt, { document_id: row.stored, duplicate: false });
    const onProgress = progressReporter(task, (stage, done, total) => this.jobs.recordProgress(id, row.attempt, stage, done, total));
    let result: IngestOutcome;
    try {
      const ingested = await this.documents.ingest(row.filename, row.content, row.created_by, {
        collectionId: row.collection_id,
        documentId: id,
        onProgress,
        // Uploads of many large files (a folder) build the dense index once, after the last of them.
        deferIndexBuild: () => this.jobs.otherJobsQueued(id),
        beforeCommit: (manager) => this.claimDocument(manager, id, row.attempt),
      });
      result = { document_id: ingested.document.id, duplicate: ingested.duplicate };
    } catch (error) {
      if (error instanceof AttemptSupersededError) return null;
      if (error instanceof DocumentRemovedError) {
        // Stored, then deleted before the job ended: the delete cancelled the job, and nothing is stored again.
        result = { document_id: null, duplicate: false };
      } else if (await this.jobs.hasClaimedDocument(id).catch(() => false)) {
        // A failure after the document's commit does not undo it: the job completes (a retry, if this write fails too).
        result = { document_id: id, duplicate: false };
      } else {
        throw await this.recordFailure(task, row.attempt, error);
      }
    }
    return this.complete(id, row.attempt, result);
  }

  /**
   * In the document's transaction, just before it commits: the job (still
   * this attempt's, not cancelled) records its document and drops the
   * upload, so no later attempt can store it again. Locking the job's row
   * here orders the commit against a delete (`IngestJobs.deleteDocument`).
   */
  private async claimDocument(manager: EntityManager, id: string, attempt: number): Promise<void> {
    if (!(await this.jobs.claimDocument(manager, id, attempt))) throw new AttemptSupersededError(id);
  }

  /**
   * The job's completion. A job cancelled meanwhile stays cancelled (the
   * update matches no row); a document deleted since (a duplicate's, say)
   * is recorded as none rather than failing on the foreign key.
   */
  private async complete(id: string, attempt: number, result: IngestOutcome): Promise<IngestOutcome> {
    await this.jobs.complete(id, attempt, result);
    this.onOutcome('completed');
    return result;
  }

  /** Writes a failed attempt to the job's row; returns what the process function throws (PermanentIngestError: no retry). */
  private async recordFailure(task: IngestTask, attempt: number, error: unknown): Promise<Error> {
    const { id } = task;
    // Bad content fails the same way every time; anything else (storage, an embeddings endpoint) may pass.
    const permanent = error instanceof CodedError && error.httpStatus < 500;
    const final = permanent || task.attemptsMade + 1 >= task.maxAttempts;
    const code = error instanceof CodedError ? error.code : 'ingest_failed';
    const message =
      error instanceof CodedError
        ? error.message
        : pgErrorCode(error)
          ? 'the ingest failed: the database did not accept the document (see the service log)'
          : 'the ingest failed (see the service log)';
    if (!permanent) this.logger.warn({ err: error }, `ingest job ${id}, attempt ${attempt}: ${message}`);
    this.onOutcome(final ? 'failed' : 'retried');
    await this.jobs
      .recordFailure(id, attempt, { final, code, message })
      .catch((writeError: Error) => this.logger.warn(`ingest job ${id}: its failure could not be recorded (${writeError.message})`));
    if (permanent) return new PermanentIngestError(message);
    return error instanceof Error ? error : new Error(String(error));
  }
}
