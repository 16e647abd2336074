import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { IsStorableText } from '../common/storable-text.js';
import { RagTrace, RetrievedChunk } from '../trace/trace.protocol.js';

export class KnowledgeDocumentInfo {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() filename: string;
  @ApiProperty({ example: 'application/pdf' }) content_type: string;
  @ApiProperty({ type: 'integer' }) size_bytes: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Pages of a PDF; null for text' }) page_count: number | null;
  @ApiProperty({ type: 'integer', description: 'Chunks at every level of the hierarchy' }) chunk_count: number;
  @ApiProperty({ type: 'integer', description: 'Leaf chunks, the ones retrieval ranks' }) leaf_count: number;
  @ApiProperty() created_by: string;
  @ApiProperty() created_at: string;
}

export class DocumentUploadResponse {
  @ApiProperty({ type: () => KnowledgeDocumentInfo }) document: KnowledgeDocumentInfo;
  @ApiProperty({ description: 'True when identical content was already stored; nothing new was created' }) duplicate: boolean;
}

export class DocumentListResponse {
  @ApiProperty({ type: () => KnowledgeDocumentInfo, isArray: true }) documents: KnowledgeDocumentInfo[];
}

export class DocumentDeleteResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() message: string;
}

export class DocumentIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  id: string;
}

export class KnowledgeSearchRequest {
  @ApiProperty({ minLength: 1, maxLength: 2000 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  @IsStorableText({ requireVisible: true })
  query: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(50)
  top_k?: number;
}

export class KnowledgeSearchResponse {
  @ApiProperty({ type: () => RetrievedChunk, isArray: true }) chunks: RetrievedChunk[];
  @ApiProperty({ type: () => RagTrace, nullable: true }) rag_trace: RagTrace | null;
}
