import type { IngestStage } from '../documents.service.js';

export const INGEST_JOB_STATUSES = ['queued', 'active', 'completed', 'failed', 'cancelled'] as const;
export type IngestJobStatus = (typeof INGEST_JOB_STATUSES)[number];

/** An ingest job as clients see it (GET /api/knowledge/jobs/:id and its SSE events). */
export interface IngestJob {
  id: string;
  /** The collection the document goes to. */
  collection_id: string;
  filename: string;
  size_bytes: number;
  status: IngestJobStatus;
  /** What the job is doing, while `active`. */
  stage: IngestStage | null;
  /** Units of `stage` done and in all: leaves embedded, rows stored. */
  progress: { done: number; total: number };
  /** Attempts started so far (a retry after a passing failure, or after its worker died, is another). */
  attempts: number;
  /** Why the job failed; while `queued` again after a failed attempt, why that attempt failed. */
  error: { code: string; message: string } | null;
  /** The stored document, once `completed` (null if it was deleted since); null when `cancelled` (its document was deleted during the job). */
  document_id: string | null;
  /** Completed without storing anything: the same content was stored already (as `document_id`). */
  duplicate: boolean | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export function isFinished(job: Pick<IngestJob, 'status'>): boolean {
  return job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';
}

export interface IngestJobRow {
  id: string;
  collection_id: string;
  filename: string;
  size_bytes: number;
  status: IngestJobStatus;
  stage: IngestStage | null;
  progress_done: number;
  progress_total: number;
  attempts: number;
  error_code: string | null;
  error_message: string | null;
  document_id: string | null;
  duplicate: boolean | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

/** The columns of a job as IngestJobRow (everything but the content). */
export const INGEST_JOB_COLUMNS = `id, collection_id, filename, size_bytes, status, stage, progress_done, progress_total, attempts, error_code, error_message,
  document_id, duplicate, created_by, ${iso('created_at')}, ${iso('updated_at')}, ${iso('finished_at')}`;

export function jobOfRow(row: IngestJobRow): IngestJob {
  return {
    id: row.id,
    collection_id: row.collection_id,
    filename: row.filename,
    size_bytes: row.size_bytes,
    status: row.status,
    stage: row.status === 'active' ? row.stage : null,
    progress: { done: row.progress_done, total: row.progress_total },
    attempts: row.attempts,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    document_id: row.document_id,
    duplicate: row.duplicate,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
  };
}
