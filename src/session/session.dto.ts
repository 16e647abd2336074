import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { LowercaseId } from '../common/lowercase-id.js';
import { IsStorableText } from '../common/storable-text.js';
import { PendingHitlState, RagTrace } from '../trace/trace.protocol.js';

export const MESSAGE_TYPES = ['human', 'ai', 'system'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const SESSION_PAGE_MAX = 100;
export const SESSION_PAGE_DEFAULT = 20;

export class MessageInfo {
  @ApiProperty({ enum: MESSAGE_TYPES, enumName: 'MessageType' })
  type: MessageType;

  @ApiProperty()
  content: string;

  @ApiProperty({ description: 'ISO 8601 time the message was stored' })
  timestamp: string;

  @ApiProperty({ type: () => RagTrace, nullable: true })
  rag_trace: RagTrace | null;
}

export class SessionMessagesResponse {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty({ type: () => MessageInfo, isArray: true, description: 'In conversation order' })
  messages: MessageInfo[];
}

export class SessionInfo {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ description: 'ISO 8601 time of the last change' })
  updated_at: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  message_count: number;

  @ApiProperty({ type: () => PendingHitlState, nullable: true, description: 'A question waiting for the user' })
  pending_hitl: PendingHitlState | null;
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
}

export class SessionIdParams {
  @ApiProperty({ format: 'uuid' })
  @LowercaseId()
  @IsUUID()
  session_id: string;
}
