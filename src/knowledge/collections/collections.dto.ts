import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { LowercaseId } from '../../common/lowercase-id.js';
import { IsStorableText } from '../../common/storable-text.js';
import { MaxCodePoints, NoControlCharacters } from '../../common/text-validators.js';
import { COLLECTION_DESCRIPTION_MAX_LENGTH, COLLECTION_NAME_MAX_LENGTH, COLLECTION_ROLES, MAX_ACCESS_ENTRIES } from './collection.js';
import type { CollectionRole } from './collection.js';

/** Collections per page of the listing: by default, and at most. */
export const COLLECTION_PAGE_DEFAULT = 100;
export const COLLECTION_PAGE_MAX = 1000;
/** `user:` or `group:` and 128 characters of name. */
const PRINCIPAL_MAX_LENGTH = 140;

const trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

export class CollectionInfo {
  @ApiProperty({ format: 'uuid', description: 'The default collection has the well-known id 00000000-0000-4000-8000-000000000001' }) id: string;
  @ApiProperty({ example: 'Finance handbooks' }) name: string;
  @ApiProperty({ description: 'Empty when none was given' }) description: string;
  @ApiProperty({ type: String, nullable: true, description: 'The user who created it; null for `default`' }) owner: string | null;
  @ApiProperty({
    enum: COLLECTION_ROLES,
    description: "The caller's role: the highest its access entries give (everyone, user, groups); `owner` for an administrator",
  })
  role: CollectionRole;
  @ApiProperty({ type: 'integer', description: 'Documents stored in it' }) document_count: number;
  @ApiProperty() created_at: string;
  @ApiProperty() updated_at: string;
}

export class CollectionListResponse {
  @ApiProperty({ type: () => CollectionInfo, isArray: true, description: 'The collections the caller may read, oldest first (`default` first)' })
  collections: CollectionInfo[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  next_cursor: string | null;
}

export class CollectionListQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: COLLECTION_PAGE_MAX, default: COLLECTION_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(COLLECTION_PAGE_MAX)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor: the `next_cursor` of a previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @IsStorableText()
  cursor?: string;
}

export class CollectionCreateBody {
  @ApiProperty({ minLength: 1, maxLength: COLLECTION_NAME_MAX_LENGTH, example: 'Finance handbooks', description: 'Trimmed before it is stored' })
  @trimmed()
  @IsString()
  @MinLength(1, { message: 'name should not be empty' })
  @MaxCodePoints(COLLECTION_NAME_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({ maxLength: COLLECTION_DESCRIPTION_MAX_LENGTH, description: 'Trimmed before it is stored; line breaks allowed' })
  @IsOptional()
  @trimmed()
  @IsString()
  @MaxCodePoints(COLLECTION_DESCRIPTION_MAX_LENGTH)
  @IsStorableText()
  description?: string;
}

export class CollectionUpdateBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: COLLECTION_NAME_MAX_LENGTH, description: 'The new name (not for `default`)' })
  @IsOptional()
  @trimmed()
  @IsString()
  @MinLength(1, { message: 'name should not be empty' })
  @MaxCodePoints(COLLECTION_NAME_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  @NoControlCharacters()
  name?: string;

  @ApiPropertyOptional({ maxLength: COLLECTION_DESCRIPTION_MAX_LENGTH, description: 'The new description' })
  @IsOptional()
  @trimmed()
  @IsString()
  @MaxCodePoints(COLLECTION_DESCRIPTION_MAX_LENGTH)
  @IsStorableText()
  description?: string;
}

export class AccessEntryBody {
  @ApiProperty({ maxLength: PRINCIPAL_MAX_LENGTH, example: 'group:finance', description: '`user:<id>`, `group:<name>` or `everyone`; ids and names compared exactly' })
  @IsString()
  @MaxLength(PRINCIPAL_MAX_LENGTH)
  @IsStorableText()
  principal: string;

  @ApiProperty({ enum: COLLECTION_ROLES })
  @IsIn(COLLECTION_ROLES)
  role: CollectionRole;
}

export class AccessPutBody {
  @ApiProperty({
    type: () => AccessEntryBody,
    isArray: true,
    maxItems: MAX_ACCESS_ENTRIES,
    description: 'The whole new access list: each principal once; at least one `owner` (except for `default`, which must keep `everyone`)',
  })
  @IsArray()
  @ArrayMaxSize(MAX_ACCESS_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => AccessEntryBody)
  entries: AccessEntryBody[];
}

export class AccessEntryInfo {
  @ApiProperty({ example: 'group:finance' }) principal: string;
  @ApiProperty({ enum: COLLECTION_ROLES }) role: CollectionRole;
}

export class AccessListResponse {
  @ApiProperty({ format: 'uuid' }) collection_id: string;
  @ApiProperty({ type: () => AccessEntryInfo, isArray: true, description: 'Owners first, then editors, then viewers; by principal within each' })
  entries: AccessEntryInfo[];
}

export class CollectionDeleteResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: 'integer', description: 'Documents deleted with it (their chunks and vectors too)' }) documents_deleted: number;
  @ApiProperty({ type: 'integer', description: 'Ingest jobs that had not ended: cancelled, they store nothing' }) jobs_cancelled: number;
}

/** `:id`: a collection id, or `default`; anything else is a collection that is not found (404). */
export class CollectionIdParams {
  @ApiProperty({ description: 'The collection id (uuid), or `default`' })
  @IsString()
  @MaxLength(100)
  id: string;
}

export class CollectionDocumentParams extends CollectionIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  document_id: string;
}
