import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { COLLECTION_IDS_DESCRIPTION, IsCollectionIdList, MAX_NAMED_COLLECTIONS } from '../common/collection-ids.js';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { IsStorableText } from '../common/storable-text.js';
import { RagTrace, RetrievedChunk } from '../trace/trace.protocol.js';
import { DOCUMENT_PAGE_DEFAULT, DOCUMENT_PAGE_MAX } from './ingest/documents.service.js';
import type { IngestStage } from './ingest/documents.service.js';
import { INGEST_JOB_STATUSES } from './ingest/jobs/ingest-job.js';
import type { IngestJobStatus } from './ingest/jobs/ingest-job.js';

export class KnowledgeDocumentInfo {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The collection holding the document' }) collection_id: string;
  @ApiProperty() filename: string;
  @ApiProperty({ example: 'Aurora X1 Router — User Manual', description: 'Its first heading, else its file name without extension' }) title: string;
  @ApiProperty({ example: 'application/pdf' }) content_type: string;
  @ApiProperty({ type: 'integer' }) size_bytes: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Pages of a PDF; null for text' }) page_count: number | null;
  @ApiProperty({ type: 'integer', description: 'Chunks at every level of the hierarchy' }) chunk_count: number;
  @ApiProperty({ type: 'integer', description: 'Leaf chunks, the ones retrieval ranks' }) leaf_count: number;
  @ApiProperty() created_by: string;
  @ApiProperty() created_at: string;
}

export class IngestJobProgress {
  @ApiProperty({ type: 'integer' }) done: number;
  @ApiProperty({ type: 'integer' }) total: number;
}

export class IngestJobError {
  @ApiProperty({ example: 'unreadable_document' }) code: string;
  @ApiProperty() message: string;
}

export class IngestJobInfo {
  @ApiProperty({ format: 'uuid', description: 'Also the id the document gets' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The collection the document goes to' }) collection_id: string;
  @ApiProperty() filename: string;
  @ApiProperty({ type: 'integer' }) size_bytes: number;
  @ApiProperty({ enum: INGEST_JOB_STATUSES }) status: IngestJobStatus;
  @ApiProperty({ enum: ['parsing', 'embedding', 'storing', 'indexing'], nullable: true, description: 'What an active job is doing' })
  stage: IngestStage | null;
  @ApiProperty({ type: () => IngestJobProgress, description: 'Units of `stage` done and in all (leaves embedded, rows stored)' })
  progress: IngestJobProgress;
  @ApiProperty({ type: 'integer', description: 'Attempts started: a retry after a passing failure, or after its worker died, is another' })
  attempts: number;
  @ApiProperty({ type: () => IngestJobError, nullable: true, description: 'Why it failed (or, while queued again, why the last attempt failed)' })
  error: IngestJobError | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'The document, once completed (null when cancelled: deleted during the job)' })
  document_id: string | null;
  @ApiProperty({ type: 'boolean', nullable: true, description: 'Completed without storing: the same content was stored already' })
  duplicate: boolean | null;
  @ApiProperty() created_by: string;
  @ApiProperty() created_at: string;
  @ApiProperty() updated_at: string;
  @ApiProperty({ type: 'string', nullable: true }) finished_at: string | null;
}

export class IngestJobListResponse {
  @ApiProperty({ type: () => IngestJobInfo, isArray: true }) jobs: IngestJobInfo[];
}

export class DocumentUploadResponse {
  @ApiProperty({ type: () => IngestJobInfo, nullable: true, description: 'The ingest job (null when the content was stored already)' })
  job: IngestJobInfo | null;
  @ApiProperty({ type: () => KnowledgeDocumentInfo, nullable: true, description: 'The document: stored already, or stored by the job waited for' })
  document: KnowledgeDocumentInfo | null;
  @ApiProperty({ description: 'True when identical content was already stored; nothing new was created' }) duplicate: boolean;
}

export class DocumentUploadQuery {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'true: answer when the job has ended (201 with the document, or the error the job failed with) instead of 202 at once',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  wait?: 'true' | 'false';
}

export class JobIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  id: string;
}

export class DocumentListResponse {
  @ApiProperty({ type: () => KnowledgeDocumentInfo, isArray: true, description: 'Newest first' }) documents: KnowledgeDocumentInfo[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  next_cursor: string | null;
}

export class DocumentListQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: DOCUMENT_PAGE_MAX, default: DOCUMENT_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(DOCUMENT_PAGE_MAX)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor: the `next_cursor` of a previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @IsStorableText()
  cursor?: string;
}

export class DocumentDeleteResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() message: string;
  @ApiProperty({ description: "The document's ingest job was still running (or queued) and is now cancelled: it stores nothing" })
  job_cancelled: boolean;
}

export class DocumentIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  id: string;
}

/** The longest query a knowledge search takes, and the most chunks it may be asked for (POST /api/knowledge/search, the MCP tool). */
export const SEARCH_QUERY_MAX_LENGTH = 2000;
export const SEARCH_TOP_K_MAX = 50;

export class KnowledgeSearchRequest {
  @ApiProperty({ minLength: 1, maxLength: SEARCH_QUERY_MAX_LENGTH })
  @IsString()
  @IsNotEmpty()
  @MaxLength(SEARCH_QUERY_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  query: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SEARCH_TOP_K_MAX })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SEARCH_TOP_K_MAX)
  top_k?: number;

  @ApiPropertyOptional({ type: [String], nullable: true, maxItems: MAX_NAMED_COLLECTIONS, description: COLLECTION_IDS_DESCRIPTION })
  @IsOptional()
  @IsCollectionIdList()
  collection_ids?: string[] | null;
}

export class KnowledgeSearchResponse {
  @ApiProperty({ type: () => RetrievedChunk, isArray: true }) chunks: RetrievedChunk[];
  @ApiProperty({ type: () => RagTrace, nullable: true }) rag_trace: RagTrace | null;
}
