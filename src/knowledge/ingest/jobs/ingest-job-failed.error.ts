import { CodedError, ERROR_CODE_STATUS, ErrorCode } from '../../../common/coded-error.js';
import type { IngestJob } from './ingest-job.js';

/** A job waited for (`wait=true`) that failed: answers as the failure it recorded. */
export class IngestJobFailedError extends CodedError {
  readonly code: ErrorCode;
  override readonly details: Record<string, unknown>;

  constructor(job: IngestJob) {
    super(job.error?.message ?? 'the ingest failed');
    const code = job.error?.code;
    this.code = code && code in ERROR_CODE_STATUS ? (code as ErrorCode) : 'ingest_failed';
    this.details = { job_id: job.id };
  }
}

/** A job waited for (`wait=true`) that was cancelled: its document, or its collection, was deleted before the job ended. */
export class IngestJobCancelledError extends CodedError {
  readonly code = 'ingest_cancelled';
  override readonly details: Record<string, unknown>;

  constructor(job: IngestJob) {
    super(`${job.filename} (or its collection) was deleted before its ingest ended: nothing is stored`);
    this.details = { job_id: job.id };
  }
}
