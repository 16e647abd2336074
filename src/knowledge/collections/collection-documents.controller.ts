import { Controller, Delete, Get, Param, Post, Query, Res, UploadedFile } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import { RequestError } from '../../common/coded-error.js';
import { DocumentUploadRoute } from '../ingest/document-upload.decorator.js';
import { acceptedExtensions } from '../ingest/document-types.js';
import { DocumentUploads, UploadedDocument } from '../ingest/document-uploads.js';
import { DocumentsService } from '../ingest/documents.service.js';
import { IngestJobs } from '../ingest/jobs/ingest-jobs.service.js';
import { DocumentDeleteResponse, DocumentListQuery, DocumentListResponse, DocumentUploadQuery, DocumentUploadResponse } from '../knowledge.dto.js';
import { CollectionAccess } from './collection-access.service.js';
import { CollectionDocumentParams, CollectionIdParams } from './collections.dto.js';

/**
 * `/api/knowledge/collections/:id/documents`: the documents of one
 * collection, as `/api/knowledge/documents` is for `default` (the same
 * upload, listing and delete). Readers list them, editors add and delete.
 */
@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge/collections')
export class CollectionDocumentsController {
  constructor(
    private readonly access: CollectionAccess,
    private readonly documents: DocumentsService,
    private readonly jobs: IngestJobs,
    private readonly uploads: DocumentUploads,
  ) {}

  @Post(':id/documents')
  @ApiOperation({
    summary: `Add a document (${acceptedExtensions()}) to a collection (editors): stored and answered at once with 202 and its ingest job`,
    description:
      'The same form and answers as POST /api/knowledge/documents, in this collection: identical content is stored once per collection ' +
      '(200 `duplicate: true`), `wait=true` answers when the job has ended. Follow the job with GET /api/knowledge/jobs/{id}.',
  })
  @DocumentUploadRoute('The collection stores the same content already: that document (`duplicate: true`)')
  @ApiErrorResponses('collection_not_found')
  async upload(
    @CurrentUser() user: AuthUser,
    @Param() params: CollectionIdParams,
    @UploadedFile() file: UploadedDocument | undefined,
    @Query() query: DocumentUploadQuery,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentUploadResponse> {
    const { id } = await this.access.require(user, params.id, 'editor');
    return this.uploads.upload({ file, wait: query.wait === 'true', collectionId: id, createdBy: user.userId }, res);
  }

  @Get(':id/documents')
  @ApiOperation({
    summary: "A collection's documents (readers), newest first, a page at a time, with their page, chunk and leaf counts",
    description: 'Pass `next_cursor` back as `cursor` for the next page.',
  })
  @ApiOkResponse({ type: DocumentListResponse, description: 'A page of documents and the cursor of the next one' })
  @ApiErrorResponses('collection_not_found', 'invalid_cursor')
  async list(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams, @Query() query: DocumentListQuery): Promise<DocumentListResponse> {
    const { id } = await this.access.require(user, params.id, 'viewer');
    return this.documents.list({ limit: query.limit, cursor: query.cursor, collectionId: id });
  }

  @Delete(':id/documents/:document_id')
  @ApiOperation({
    summary: 'Remove a document of a collection (editors) and its chunks; a document still being ingested is removed too: its job is cancelled',
    description: 'As DELETE /api/knowledge/documents/{id}, in this collection: a document of another collection is not found here.',
  })
  @ApiOkResponse({ type: DocumentDeleteResponse, description: 'The document and its chunks are gone; its unfinished ingest job, if any, is cancelled' })
  @ApiErrorResponses('collection_not_found', 'collection_forbidden', 'document_not_found')
  async remove(@CurrentUser() user: AuthUser, @Param() params: CollectionDocumentParams): Promise<DocumentDeleteResponse> {
    const { id } = await this.access.require(user, params.id, 'editor');
    const deleted = await this.jobs.deleteDocument(params.document_id, id);
    if (!deleted.document && !deleted.jobCancelled) throw new RequestError('document_not_found', `Document ${params.document_id} not found in this collection`);
    return {
      id: params.document_id,
      message: deleted.jobCancelled ? 'Document deleted; its ingest job is cancelled' : 'Document deleted',
      job_cancelled: deleted.jobCancelled,
    };
  }
}
