import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Res,
  UploadedFile,
  UseInterceptors,
  BadRequestException,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { normalizeChunks, normalizeRagTrace } from '../trace/trace.normalizer.js';
import { uploadedDocumentName } from './document-name.js';
import { DocumentsService } from './documents.service.js';
import {
  DocumentDeleteResponse,
  DocumentIdParams,
  DocumentListResponse,
  DocumentUploadResponse,
  KnowledgeSearchRequest,
  KnowledgeSearchResponse,
} from './knowledge.dto.js';
import { RetrievalService } from './retrieval.service.js';

interface UploadedDocument {
  originalname: string;
  buffer: Buffer;
  size: number;
}

function requireAdmin(user: AuthUser): void {
  if (!user.isAdmin) throw new ForbiddenException('Only administrators (token role "admin") may change the knowledge base');
}

@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge')
export class KnowledgeController {
  constructor(
    private readonly documents: DocumentsService,
    private readonly retrieval: RetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('documents')
  @ApiOperation({ summary: 'Add a document (.txt, .md, .pdf); identical content is not stored twice' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiOkResponse({ type: DocumentUploadResponse, description: 'The same content is stored already: the existing document (`duplicate: true`)' })
  @ApiCreatedResponse({ type: DocumentUploadResponse, description: 'The document was added, with its chunks' })
  @ApiErrorResponses(403, 413, 415, 422, 429)
  @RateLimit('upload')
  @UseInterceptors(FileInterceptor('file'))
  async upload(
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedDocument | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DocumentUploadResponse> {
    requireAdmin(user);
    if (!file) throw new BadRequestException('file is missing: send the document as multipart field "file"');
    // A bad name (400), an unsupported type (415) or an unreadable file (422) answers by its error code.
    const result = await this.documents.ingest(uploadedDocumentName(file.originalname), file.buffer, user.userId);
    res.status(result.duplicate ? 200 : 201);
    return result;
  }

  @Get('documents')
  @ApiOperation({ summary: 'The documents of the knowledge base, with their chunk counts' })
  @ApiOkResponse({ type: DocumentListResponse, description: 'All documents, with their chunk counts' })
  async list(): Promise<DocumentListResponse> {
    return { documents: await this.documents.list() };
  }

  @Delete('documents/:id')
  @ApiOperation({ summary: 'Remove a document and its chunks' })
  @ApiOkResponse({ type: DocumentDeleteResponse, description: 'The document and its chunks are gone' })
  @ApiErrorResponses(403, 404)
  async remove(@CurrentUser() user: AuthUser, @Param() params: DocumentIdParams): Promise<DocumentDeleteResponse> {
    requireAdmin(user);
    if (!(await this.documents.remove(params.id))) throw new NotFoundException(`Document ${params.id} not found`);
    return { id: params.id, message: 'Document deleted' };
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
