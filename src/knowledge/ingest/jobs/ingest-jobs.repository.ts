import { DataSource, EntityManager } from 'typeorm';
import { isForeignKeyViolation, sqlRows } from '../../../database/sql.js';
import type { IngestStage } from '../documents.service.js';
import { INGEST_JOB_COLUMNS, IngestJob, IngestJobRow, jobOfRow } from './ingest-job.js';

/** What an attempt needs of the job it took. */
export interface TakenJob {
  collection_id: string;
  filename: string;
  content: Buffer | null;
  created_by: string;
  attempt: number;
  /** The document an earlier attempt stored and claimed, if any. */
  stored: string | null;
}

/**
 * The ingest jobs (`knowledge_ingest_jobs`). An attempt's writes name its
 * number (`attempt`): a worker that lost its job to a later attempt matches
 * no row. Methods that take an EntityManager run in the caller's transaction.
 */
export class IngestJobsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores the job; null when its collection no longer exists (deleted since the caller's access was checked). */
  async insert(job: { id: string; collectionId: string; filename: string; content: Buffer; createdBy: string }): Promise<IngestJob | null> {
    try {
      const [row] = await sqlRows<IngestJobRow>(
        this.dataSource,
        `INSERT INTO knowledge_ingest_jobs (id, collection_id, filename, size_bytes, content, created_by) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING ${INGEST_JOB_COLUMNS}`,
        [job.id, job.collectionId, job.filename, job.content.length, job.content, job.createdBy],
      );
      return jobOfRow(row);
    } catch (error) {
      if (isForeignKeyViolation(error)) return null;
      throw error;
    }
  }

  async find(id: string): Promise<IngestJob | null> {
    const [row] = await sqlRows<IngestJobRow>(this.dataSource, `SELECT ${INGEST_JOB_COLUMNS} FROM knowledge_ingest_jobs WHERE id = $1`, [id]);
    return row ? jobOfRow(row) : null;
  }

  /** The newest jobs first. */
  async list(limit: number): Promise<IngestJob[]> {
    const rows = await sqlRows<IngestJobRow>(this.dataSource, `SELECT ${INGEST_JOB_COLUMNS} FROM knowledge_ingest_jobs ORDER BY created_at DESC, id LIMIT $1`, [limit]);
    return rows.map(jobOfRow);
  }

  async exists(id: string): Promise<boolean> {
    const [known] = await sqlRows(this.dataSource, 'SELECT 1 FROM knowledge_ingest_jobs WHERE id = $1', [id]);
    return known !== undefined;
  }

  /** Cancels the collection's job `id` if it is unfinished (in the caller's transaction); whether it was. */
  async cancelUnfinished(manager: EntityManager, id: string, collectionId: string): Promise<boolean> {
    const cancelled = await sqlRows(
      manager,
      `UPDATE knowledge_ingest_jobs SET status = 'cancelled', stage = NULL, content = NULL, document_id = NULL, error_code = NULL,
                error_message = NULL, finished_at = now(), updated_at = now()
          WHERE id = $1 AND collection_id = $2 AND status IN ('queued', 'active') RETURNING id`,
      [id, collectionId],
    );
    return cancelled.length > 0;
  }

  /** Starts the next attempt at an unfinished job; undefined when the job has ended (or is not stored). */
  async take(id: string): Promise<TakenJob | undefined> {
    const [row] = await sqlRows<TakenJob>(
      this.dataSource,
      `UPDATE knowledge_ingest_jobs SET status = 'active', attempts = attempts + 1, stage = 'parsing', progress_done = 0,
              progress_total = 0, updated_at = now()
        WHERE id = $1 AND status IN ('queued', 'active')
        RETURNING collection_id, filename, content, created_by, attempts AS attempt, document_id AS stored`,
      [id],
    );
    return row;
  }

  /** In the document's transaction: the attempt records its document and drops the upload; false when the job is no longer its own. */
  async claimDocument(manager: EntityManager, id: string, attempt: number): Promise<boolean> {
    const claimed = await sqlRows(
      manager,
      `UPDATE knowledge_ingest_jobs SET document_id = $1, content = NULL, updated_at = now()
        WHERE id = $1 AND status = 'active' AND attempts = $2 RETURNING id`,
      [id, attempt],
    );
    return claimed.length > 0;
  }

  /** Whether an attempt claimed the job's document. */
  async hasClaimedDocument(id: string): Promise<boolean> {
    const [row] = await sqlRows<{ stored: boolean }>(this.dataSource, 'SELECT document_id IS NOT NULL AS stored FROM knowledge_ingest_jobs WHERE id = $1', [id]);
    return row?.stored === true;
  }

  /** Completes the attempt's job, with its document if that still exists. */
  async complete(id: string, attempt: number, result: { document_id: string | null; duplicate: boolean }): Promise<void> {
    await this.dataSource.query(
      `UPDATE knowledge_ingest_jobs SET status = 'completed', stage = NULL, content = NULL, error_code = NULL, error_message = NULL,
              document_id = (SELECT d.id FROM knowledge_documents d WHERE d.id = $2), duplicate = $3, finished_at = now(), updated_at = now()
        WHERE id = $1 AND attempts = $4 AND status = 'active'`,
      [id, result.document_id, result.duplicate, attempt],
    );
  }

  async otherJobsQueued(id: string): Promise<boolean> {
    const [row] = await sqlRows<{ queued: boolean }>(this.dataSource, `SELECT EXISTS (SELECT 1 FROM knowledge_ingest_jobs WHERE status = 'queued' AND id <> $1) AS queued`, [id]);
    return row.queued;
  }

  /** Records the attempt's failure: `final` fails the job (and drops its upload), otherwise it is queued again. */
  async recordFailure(id: string, attempt: number, failure: { final: boolean; code: string; message: string }): Promise<void> {
    await this.dataSource.query(
      `UPDATE knowledge_ingest_jobs SET status = $2, stage = NULL, error_code = $3, error_message = $4,
                finished_at = CASE WHEN $5 THEN now() END, content = CASE WHEN $5 THEN NULL ELSE content END, updated_at = now()
          WHERE id = $1 AND attempts = $6 AND status = 'active'`,
      [id, failure.final ? 'failed' : 'queued', failure.code, failure.message, failure.final, attempt],
    );
  }

  /** Writes the attempt's progress; false when the job is no longer its own. */
  async recordProgress(id: string, attempt: number, stage: IngestStage, done: number, total: number): Promise<boolean> {
    const updated = await sqlRows(
      this.dataSource,
      `UPDATE knowledge_ingest_jobs SET stage = $2, progress_done = $3, progress_total = $4, updated_at = now()
            WHERE id = $1 AND status = 'active' AND attempts = $5 RETURNING id`,
      [id, stage, done, total, attempt],
    );
    return updated.length > 0;
  }

  /** Unfinished jobs, oldest first, whose row has not moved for `idleSeconds`. */
  /** How many jobs are queued and active (the partial index of unfinished jobs answers it). */
  async unfinishedCounts(): Promise<Array<{ status: 'queued' | 'active'; count: number }>> {
    const rows = await sqlRows<{ status: 'queued' | 'active'; count: string }>(
      this.dataSource,
      `SELECT status, count(*) AS count FROM knowledge_ingest_jobs WHERE status IN ('queued', 'active') GROUP BY status`,
    );
    const counts = new Map(rows.map((row) => [row.status, Number(row.count)]));
    return (['queued', 'active'] as const).map((status) => ({ status, count: counts.get(status) ?? 0 }));
  }

  async idleUnfinished(idleSeconds: number, limit: number): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `SELECT id FROM knowledge_ingest_jobs
          WHERE status IN ('queued', 'active') AND updated_at < now() - make_interval(secs => $1)
          ORDER BY created_at LIMIT ${limit}`,
      [idleSeconds],
    );
    return rows.map((row) => row.id);
  }
}
