import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength } from 'class-validator';
import { MaxCodePoints } from '../common/text-validators.js';
import { COLLECTION_IDS_DESCRIPTION, IsCollectionIdList, MAX_NAMED_COLLECTIONS } from '../common/collection-ids.js';
import { LowercaseId } from '../common/lowercase-id.js';
import { IsStorableText } from '../common/storable-text.js';
import { PendingHitlState, RagTrace } from '../trace/trace.protocol.js';

export const MESSAGE_TYPES = ['human', 'ai', 'system'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const MESSAGE_STATUSES = ['complete', 'cancelled', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const FEEDBACK_RATINGS = ['up', 'down'] as const;
export type FeedbackRating = (typeof FEEDBACK_RATINGS)[number];

export const SESSION_PAGE_MAX = 100;
export const SESSION_PAGE_DEFAULT = 20;
export const MESSAGE_PAGE_MAX = 200;
export const TITLE_MAX_LENGTH = 200;
export const SEARCH_MAX_LENGTH = 200;
export const FEEDBACK_COMMENT_MAX_LENGTH = 2000;

const trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/**
 * A query parameter that must be a plain decimal integer of at most 9 digits
 * ("1e3", "0x10", " 5", "5.0" and repeated parameters are refused, not coerced).
 */
const strictInteger = () => Transform(({ value }) => (typeof value === 'string' && /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN));

export class MessageFeedback {
  @ApiProperty({ enum: FEEDBACK_RATINGS, enumName: 'FeedbackRating' })
  rating: FeedbackRating;

  @ApiProperty({ type: String, nullable: true })
  comment: string | null;

  @ApiProperty({ description: 'ISO 8601 time the feedback was last set' })
  updated_at: string;
}

export class MessageInfo {
  @ApiProperty({ format: 'uuid', description: 'Stable id of the message' })
  id: string;

  @ApiProperty({ type: 'integer', minimum: 1, description: '1-based position in the conversation' })
  seq: number;

  @ApiProperty({ enum: MESSAGE_TYPES, enumName: 'MessageType' })
  type: MessageType;

  @ApiProperty({
    enum: MESSAGE_STATUSES,
    enumName: 'MessageStatus',
    description: '`cancelled` or `failed` for what a stopped or failed turn kept',
  })
  status: MessageStatus;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The run that stored the message' })
  run_id: string | null;

  @ApiProperty()
  content: string;

  @ApiProperty({ description: 'ISO 8601 time the message was stored' })
  timestamp: string;

  @ApiProperty({ type: () => RagTrace, nullable: true })
  rag_trace: RagTrace | null;

  @ApiProperty({
    type: String,
    isArray: true,
    description: 'An answer: the tools its turn ran, in the order first called (empty for a question, and for answers stored before tools were recorded)',
    example: ['knowledge_search'],
  })
  tools: string[];

  @ApiProperty({ type: () => MessageFeedback, nullable: true, description: "The owner's rating, null when none" })
  feedback: MessageFeedback | null;
}

export class SessionMessagesResponse {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty({ type: () => MessageInfo, isArray: true, description: 'In conversation order (newest last)' })
  messages: MessageInfo[];

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Pass as `before` for the page of older messages; null when this page starts the conversation',
  })
  next_before: number | null;
}

export class SessionMessagesQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'Only messages with a smaller seq (exclusive); absent: up to the newest',
  })
  @IsOptional()
  @strictInteger()
  @IsInt({ message: 'before must be a non-negative integer of at most 9 digits' })
  @Min(1)
  before?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MESSAGE_PAGE_MAX,
    description: 'The last `limit` messages before `before`; absent: all of them',
  })
  @IsOptional()
  @strictInteger()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(MESSAGE_PAGE_MAX)
  limit?: number;
}

export class ActiveRun {
  @ApiProperty({ format: 'uuid', description: 'Rejoin with GET /api/chat/runs/{run_id}/stream' })
  run_id: string;

  @ApiProperty({ description: 'ISO 8601 time the run started' })
  started_at: string;
}

export class SessionInfo {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ description: 'ISO 8601 time the session was created' })
  created_at: string;

  @ApiProperty({ description: 'ISO 8601 time of the last turn or transcript change (a rename does not move it)' })
  updated_at: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  message_count: number;

  @ApiProperty({ type: () => PendingHitlState, nullable: true, description: 'A question waiting for the user' })
  pending_hitl: PendingHitlState | null;

  @ApiProperty({
    type: () => ActiveRun,
    nullable: true,
    description: 'The run in flight in this session (read fresh, never from the cache), or null',
  })
  active_run: ActiveRun | null;

  @ApiProperty({
    type: [String],
    nullable: true,
    description: "The knowledge collections this session's turns search when a turn names none (set with PATCH); null: every collection the user can read",
  })
  collection_ids: string[] | null;
}

export class SessionListResponse {
  @ApiProperty({ type: () => SessionInfo, isArray: true, description: 'Newest updated_at first' })
  sessions: SessionInfo[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  next_cursor: string | null;
}

export class SessionDeleteResponse {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty()
  message: string;
}

export class SessionListQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SESSION_PAGE_MAX, default: SESSION_PAGE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SESSION_PAGE_MAX)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor from a previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @IsStorableText()
  cursor?: string;

  @ApiPropertyOptional({
    maxLength: SEARCH_MAX_LENGTH,
    description: 'Only sessions whose title contains this text, case-insensitively (`%`, `_` and `\\` match themselves); empty: all',
  })
  @IsOptional()
  @IsString()
  @MaxCodePoints(SEARCH_MAX_LENGTH)
  @IsStorableText()
  q?: string;
}

/** A change of a session: its title, the knowledge collections its turns search, or both. */
export class SessionUpdateBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: TITLE_MAX_LENGTH, example: 'Router questions', description: 'Trimmed before it is stored' })
  @IsOptional()
  @trimmed()
  @IsString()
  @MinLength(1, { message: 'title should not be empty' })
  @MaxCodePoints(TITLE_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  title?: string;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_NAMED_COLLECTIONS,
    description: `Saved for the session's turns that name no collection. ${COLLECTION_IDS_DESCRIPTION}; null clears the choice`,
  })
  @IsOptional()
  @IsCollectionIdList()
  collection_ids?: string[] | null;
}

export class MessageFeedbackBody {
  @ApiProperty({ enum: FEEDBACK_RATINGS, enumName: 'FeedbackRating', example: 'up' })
  @IsIn(FEEDBACK_RATINGS)
  rating: FeedbackRating;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: FEEDBACK_COMMENT_MAX_LENGTH, example: 'Clear and correct' })
  @IsOptional()
  @IsString()
  @MaxCodePoints(FEEDBACK_COMMENT_MAX_LENGTH)
  @IsStorableText()
  comment?: string | null;
}

export class SessionIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  session_id: string;
}

export class MessageIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  session_id: string;

  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  message_id: string;
}
