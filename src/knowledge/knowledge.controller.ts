import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Res, UploadedFile } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import { serviceSseTransport, SseWriter } from '../common/sse-stream.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { normalizeChunks, normalizeRagTrace } from '../trace/trace.normalizer.js';
import { CollectionAccess, CollectionNotFoundError } from './collections/collection-access.service.js';
import { DEFAULT_COLLECTION_ID } from './collections/collection.js';
import { DocumentUploadRoute } from './ingest/document-upload.decorator.js';
import { DocumentUploads, UploadedDocument } from './ingest/document-uploads.js';
import { DocumentsService } from './ingest/documents.service.js';
import {
  DocumentDeleteResponse,
  DocumentIdParams,
  DocumentListQuery,
  DocumentListResponse,
  DocumentUploadQuery,
  DocumentUploadResponse,
  IngestJobInfo,
  IngestJobListResponse,
  JobIdParams,
  KnowledgeSearchRequest,
  KnowledgeSearchResponse,
} from './knowledge.dto.js';
import { RetrievalService } from './retrieval/retrieval.service.js';
import { IngestJob, isFinished } from './ingest/jobs/ingest-job.js';
import { IngestJobs } from './ingest/jobs/ingest-jobs.service.js';
import { RequestError } from '../common/coded-error.js';

function requireAdmin(user: AuthUser): void {
  if (!user.isAdmin) throw new RequestError('forbidden', 'Only administrators (token role "admin") may list every ingest job');
}

@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge')
export class KnowledgeController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly jobs: IngestJobs,
    private readonly uploads: DocumentUploads,
    private readonly access: CollectionAccess,
    private readonly retrieval: RetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('documents')
  @ApiOperation({
    summary:
      'Add a document (.txt, .md, .pdf, .docx, .xlsx, .csv, .html) to the `default` collection: stored and answered at once with 202 and its ingest job; identical content is not stored twice',
    description:
      'For administrators and editors of `default` (as POST /api/knowledge/collections/default/documents). The name, the type (macro-enabled Office files are refused), ' +
      'the text encoding and the leading bytes of PDFs and Office files are checked at once (400, 415, 422). The job parses, chunks, embeds and stores the document on ' +
      'any instance; follow it with GET /api/knowledge/jobs/{id} or its SSE stream /api/knowledge/jobs/{id}/events. ' +
      'With `wait=true` the request answers when the job has ended: 201 with the document, or the error the job failed with.',
  })
  @DocumentUploadRoute('The same content is stored already: the existing document (`duplicate: true`)')
  async upload(
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedDocument | undefined,
    @Query() query: DocumentUploadQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentUploadResponse> {
    await this.access.require(user, DEFAULT_COLLECTION_ID, 'editor');
    return this.uploads.upload({ file, wait: query.wait === 'true', collectionId: DEFAULT_COLLECTION_ID, createdBy: user.userId }, res);
  }

  @Get('jobs')
  @ApiOperation({ summary: 'The newest ingest jobs (at most 50)' })
  @ApiOkResponse({ type: IngestJobListResponse, description: 'Newest first' })
  @ApiErrorResponses(403)
  async listJobs(@CurrentUser() user: AuthUser): Promise<IngestJobListResponse> {
    requireAdmin(user);
    return { jobs: await this.jobs.list(50) };
  }

  @Get('jobs/:id')
  @ApiOperation({
    summary: 'An ingest job: status, stage, progress, attempts, error, and its document once completed',
    description: "For administrators and editors of the job's collection; a job of a collection the caller cannot read is not found (404).",
  })
  @ApiOkResponse({ type: IngestJobInfo, description: 'The job as it is now' })
  @ApiErrorResponses('collection_forbidden', 'ingest_job_not_found')
  async getJob(@CurrentUser() user: AuthUser, @Param() params: JobIdParams): Promise<IngestJobInfo> {
    return this.editableJob(user, params.id);
  }

  @Get('jobs/:id/events')
  @ApiOperation({
    summary: 'An ingest job as Server-Sent Events: `event: job` with the job each time its state or progress moves; ends once it has completed, failed or been cancelled',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: '`event: job`, `data:` the job (as GET /api/knowledge/jobs/{id}); the last one has status completed, failed or cancelled' })
  @ApiErrorResponses('collection_forbidden', 'ingest_job_not_found')
  async jobEvents(@CurrentUser() user: AuthUser, @Param() params: JobIdParams, @Res() res: Response): Promise<void> {
    const first = await this.editableJob(user, params.id);
    // A client that left during the lookup gets no watcher (it would poll until the job ends).
    if (res.destroyed || res.req.socket.destroyed) return;
    const writer = new SseWriter(res, serviceSseTransport(this.config.chat.sseHeartbeatMs));
    writer.open();
    writer.startHeartbeat();
    let last = '';
    let stop = () => undefined as void;
    const end = () => {
      stop();
      writer.end();
    };
    const send = (job: IngestJob) => {
      if (writer.ended) return;
      const data = JSON.stringify(job);
      if (data !== last) {
        last = data;
        void writer.write(`event: job\ndata: ${data}\n\n`);
      }
      if (isFinished(job)) end();
    };
    writer.signal.addEventListener('abort', end);
    stop = this.jobs.watch(params.id, send, first);
    send(first);
  }

  @Get('documents')
  @ApiOperation({
    summary: 'The documents of the `default` collection, newest first, a page at a time, with their page, chunk and leaf counts',
    description: 'Pass `next_cursor` back as `cursor` for the next page. The counts are figures stored with each document.',
  })
  @ApiOkResponse({ type: DocumentListResponse, description: 'A page of documents and the cursor of the next one' })
  async list(@Query() query: DocumentListQuery): Promise<DocumentListResponse> {
    return this.documents.list({ limit: query.limit, cursor: query.cursor });
  }

  @Delete('documents/:id')
  @ApiOperation({
    summary: 'Remove a document of the `default` collection and its chunks; a document still being ingested (the id of its job) is removed too: its job is cancelled',
    description:
      "An upload's document id is its job's id, known from the 202. Deleting it while the job is queued or running cancels the job " +
      '(status `cancelled`, `job_cancelled: true`) whatever its stage: the document is not stored, or is removed if it just was, and never comes back.',
  })
  @ApiOkResponse({ type: DocumentDeleteResponse, description: 'The document and its chunks are gone; its unfinished ingest job, if any, is cancelled' })
  @ApiErrorResponses('collection_forbidden', 'document_not_found')
  async remove(@CurrentUser() user: AuthUser, @Param() params: DocumentIdParams): Promise<DocumentDeleteResponse> {
    await this.access.require(user, DEFAULT_COLLECTION_ID, 'editor');
    const deleted = await this.jobs.deleteDocument(params.id, DEFAULT_COLLECTION_ID);
    if (!deleted.document && !deleted.jobCancelled) throw new RequestError('document_not_found', `Document ${params.id} not found`);
    return {
      id: params.id,
      message: deleted.jobCancelled ? 'Document deleted; its ingest job is cancelled' : 'Document deleted',
      job_cancelled: deleted.jobCancelled,
    };
  }

  @Post('search')
  @HttpCode(200)
  @RateLimit('search')
  @ApiErrorResponses('collection_not_found', 413, 429)
  @ApiOperation({
    summary: 'Retrieval only, for tuning: the chunks found and the trace',
    description: 'Searches the collections named in `collection_ids`, else every collection the caller can read; each chunk names its `collection_id`.',
  })
  @ApiOkResponse({ type: KnowledgeSearchResponse, description: 'The chunks kept, best first, and the retrieval trace' })
  async search(@CurrentUser() user: AuthUser, @Body() body: KnowledgeSearchRequest): Promise<KnowledgeSearchResponse> {
    const topK = body.top_k ?? this.config.knowledge.topK;
    const scope = await this.access.retrievalScope(user, body.collection_ids);
    const result = await this.retrieval.search(body.query, topK, { scope });
    const chunks = normalizeChunks(result.hits);
    return {
      chunks,
      rag_trace: normalizeRagTrace({
        ...result.trace,
        tool_used: false,
        query: body.query,
        retrieval_stage: 'initial',
        retrieval_mode: result.mode,
        pipeline_id: result.pipelineId,
      }),
    };
  }

  /**
   * The job, for an administrator or an editor of its collection (who uploaded it, or may have); 404 for a job of a
   * collection the caller cannot read (its existence is not disclosed), 403 for a reader of it who may not edit it.
   */
  private async editableJob(user: AuthUser, id: string): Promise<IngestJob> {
    const job = await this.jobs.find(id);
    if (!job) throw new RequestError('ingest_job_not_found', `Ingest job ${id} not found`);
    if (user.isAdmin) return job;
    try {
      await this.access.require(user, job.collection_id, 'editor');
    } catch (error) {
      if (error instanceof CollectionNotFoundError) throw new RequestError('ingest_job_not_found', `Ingest job ${id} not found`);
      throw error;
    }
    return job;
  }
}
