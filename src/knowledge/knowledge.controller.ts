import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiAcceptedResponse, ApiBearerAuth, ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import { serviceSseTransport, SseWriter } from '../common/sse-stream.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { normalizeChunks, normalizeRagTrace } from '../trace/trace.normalizer.js';
import { uploadedDocumentName } from './ingest/document-name.js';
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
import { IngestJobCancelledError, IngestJobFailedError } from './ingest/jobs/ingest-job-failed.error.js';
import { IngestJobs } from './ingest/jobs/ingest-jobs.service.js';
import { RequestError } from '../common/coded-error.js';

interface UploadedDocument {
  originalname: string;
  buffer: Buffer;
  size: number;
}

function requireAdmin(user: AuthUser): void {
  if (!user.isAdmin) throw new RequestError('forbidden', 'Only administrators (token role "admin") may change the knowledge base');
}

@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge')
export class KnowledgeController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly jobs: IngestJobs,
    private readonly retrieval: RetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('documents')
  @ApiOperation({
    summary: 'Add a document (.txt, .md, .pdf, .docx, .xlsx, .csv, .html): stored and answered at once with 202 and its ingest job; identical content is not stored twice',
    description:
      'The name, the type (macro-enabled Office files are refused), the text encoding and the leading bytes of PDFs and Office files are ' +
      'checked at once (400, 415, 422). The job parses, chunks, embeds and stores the document on ' +
      'any instance; follow it with GET /api/knowledge/jobs/{id} or its SSE stream /api/knowledge/jobs/{id}/events. ' +
      'With `wait=true` the request answers when the job has ended: 201 with the document, or the error the job failed with.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiAcceptedResponse({ type: DocumentUploadResponse, description: 'Stored and queued: `job` (Location: the job)' })
  @ApiOkResponse({ type: DocumentUploadResponse, description: 'The same content is stored already: the existing document (`duplicate: true`)' })
  @ApiCreatedResponse({ type: DocumentUploadResponse, description: '`wait=true`: the job stored the document' })
  @ApiErrorResponses(
    403,
    'invalid_document_name',
    'index_space_mismatch',
    'ingest_cancelled',
    413,
    'document_too_large',
    'unsupported_document',
    'unreadable_document',
    429,
    'ingest_failed',
  )
  @RateLimit('upload')
  @UseInterceptors(FileInterceptor('file'))
  async upload(
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedDocument | undefined,
    @Query() query: DocumentUploadQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentUploadResponse> {
    requireAdmin(user);
    if (!file) throw new RequestError('invalid_request', 'file is missing: send the document as multipart field "file"');
    // A bad name (400), an unsupported type (415) or unreadable text (422) answers by its error code.
    const submitted = await this.jobs.submit(uploadedDocumentName(file.originalname), file.buffer, user.userId);
    if (!submitted.job) {
      res.status(200);
      return { job: null, document: submitted.document, duplicate: true };
    }
    res.setHeader('Location', `/api/knowledge/jobs/${submitted.job.id}`);
    if (query.wait !== 'true') {
      res.status(202);
      return { job: submitted.job, document: null, duplicate: false };
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    if (res.destroyed) gone.abort();
    let job: IngestJob;
    try {
      job = await this.jobs.waitUntilFinished(submitted.job.id, gone.signal);
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

  @Get('jobs')
  @ApiOperation({ summary: 'The newest ingest jobs (at most 50)' })
  @ApiOkResponse({ type: IngestJobListResponse, description: 'Newest first' })
  @ApiErrorResponses(403)
  async listJobs(@CurrentUser() user: AuthUser): Promise<IngestJobListResponse> {
    requireAdmin(user);
    return { jobs: await this.jobs.list(50) };
  }

  @Get('jobs/:id')
  @ApiOperation({ summary: 'An ingest job: status, stage, progress, attempts, error, and its document once completed' })
  @ApiOkResponse({ type: IngestJobInfo, description: 'The job as it is now' })
  @ApiErrorResponses(403, 'ingest_job_not_found')
  async getJob(@CurrentUser() user: AuthUser, @Param() params: JobIdParams): Promise<IngestJobInfo> {
    requireAdmin(user);
    const job = await this.jobs.find(params.id);
    if (!job) throw new RequestError('ingest_job_not_found', `Ingest job ${params.id} not found`);
    return job;
  }

  @Get('jobs/:id/events')
  @ApiOperation({
    summary: 'An ingest job as Server-Sent Events: `event: job` with the job each time its state or progress moves; ends once it has completed, failed or been cancelled',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: '`event: job`, `data:` the job (as GET /api/knowledge/jobs/{id}); the last one has status completed, failed or cancelled' })
  @ApiErrorResponses(403, 'ingest_job_not_found')
  async jobEvents(@CurrentUser() user: AuthUser, @Param() params: JobIdParams, @Res() res: Response): Promise<void> {
    requireAdmin(user);
    const first = await this.jobs.find(params.id);
    if (!first) throw new RequestError('ingest_job_not_found', `Ingest job ${params.id} not found`);
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
    stop = this.jobs.watch(params.id, send);
    send(first);
  }

  @Get('documents')
  @ApiOperation({
    summary: 'The documents of the knowledge base, newest first, a page at a time, with their page, chunk and leaf counts',
    description: 'Pass `next_cursor` back as `cursor` for the next page. The counts are figures stored with each document.',
  })
  @ApiOkResponse({ type: DocumentListResponse, description: 'A page of documents and the cursor of the next one' })
  async list(@Query() query: DocumentListQuery): Promise<DocumentListResponse> {
    return this.documents.list({ limit: query.limit, cursor: query.cursor });
  }

  @Delete('documents/:id')
  @ApiOperation({
    summary: 'Remove a document and its chunks; a document still being ingested (the id of its job) is removed too: its job is cancelled',
    description:
      "An upload's document id is its job's id, known from the 202. Deleting it while the job is queued or running cancels the job " +
      '(status `cancelled`, `job_cancelled: true`) whatever its stage: the document is not stored, or is removed if it just was, and never comes back.',
  })
  @ApiOkResponse({ type: DocumentDeleteResponse, description: 'The document and its chunks are gone; its unfinished ingest job, if any, is cancelled' })
  @ApiErrorResponses(403, 'document_not_found')
  async remove(@CurrentUser() user: AuthUser, @Param() params: DocumentIdParams): Promise<DocumentDeleteResponse> {
    requireAdmin(user);
    const deleted = await this.jobs.deleteDocument(params.id);
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
  @ApiErrorResponses(413, 429)
  @ApiOperation({ summary: 'Retrieval only, for tuning: the chunks found and the trace' })
  @ApiOkResponse({ type: KnowledgeSearchResponse, description: 'The chunks kept, best first, and the retrieval trace' })
  async search(@Body() body: KnowledgeSearchRequest): Promise<KnowledgeSearchResponse> {
    const topK = body.top_k ?? this.config.knowledge.topK;
    const result = await this.retrieval.search(body.query, topK);
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
}
