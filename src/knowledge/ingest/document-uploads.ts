import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { RequestError } from '../../common/coded-error.js';
import { uploadedDocumentName } from './document-name.js';
import { DocumentsService, KnowledgeDocument } from './documents.service.js';
import { IngestJob } from './jobs/ingest-job.js';
import { IngestJobCancelledError, IngestJobFailedError } from './jobs/ingest-job-failed.error.js';
import { IngestJobs } from './jobs/ingest-jobs.service.js';

/** A file as multer hands it over. */
export interface UploadedDocument {
  originalname: string;
  buffer: Buffer;
  size: number;
}

export interface UploadAnswer {
  job: IngestJob | null;
  document: KnowledgeDocument | null;
  duplicate: boolean;
}

/**
 * An upload into a collection, the same for every route that takes one
 * (`/api/knowledge/documents` for `default`, `/api/knowledge/collections/:id/documents`):
 * checked and stored at once and answered 202 with its job (Location: the
 * job), 200 with the document the collection already stores with that
 * content, or, with `wait`, when the job has ended (201, or the job's error).
 * The caller has checked that the user may add documents to the collection.
 */
@Injectable()
export class DocumentUploads {
  constructor(
    private readonly documents: DocumentsService,
    private readonly jobs: IngestJobs,
  ) {}

  async upload(upload: { file: UploadedDocument | undefined; wait: boolean; collectionId: string; createdBy: string }, res: Response): Promise<UploadAnswer> {
    const { file } = upload;
    if (!file) throw new RequestError('invalid_request', 'file is missing: send the document as multipart field "file"');
    // A bad name (400), an unsupported type (415) or unreadable text (422) answers by its error code.
    const submitted = await this.jobs.submit(uploadedDocumentName(file.originalname), file.buffer, upload.createdBy, upload.collectionId);
    if (!submitted.job) {
      res.status(200);
      return { job: null, document: submitted.document, duplicate: true };
    }
    res.setHeader('Location', `/api/knowledge/jobs/${submitted.job.id}`);
    if (!upload.wait) {
      res.status(202);
      return { job: submitted.job, document: null, duplicate: false };
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    if (res.destroyed) gone.abort();
    let job: IngestJob;
    try {
      job = await this.jobs.waitUntilFinished(submitted.job.id, gone.signal, submitted.job);
    } catch (error) {
      // The client left: nobody to answer; the job goes on.
      if (gone.signal.aborted) return { job: submitted.job, document: null, duplicate: false };
      throw error;
    }
    if (job.status === 'failed') throw new IngestJobFailedError(job);
    if (job.status === 'cancelled') throw new IngestJobCancelledError(job);
    const document = job.document_id ? await this.documents.find(job.document_id) : null;
    res.status(job.duplicate ? 200 : 201);
    return { job, document, duplicate: job.duplicate ?? false };
  }
}
