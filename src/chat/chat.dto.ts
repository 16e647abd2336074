import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { COLLECTION_IDS_DESCRIPTION, IsCollectionIdList, MAX_NAMED_COLLECTIONS } from '../common/collection-ids.js';
import { LowercaseId } from '../common/lowercase-id.js';
import { IsStorableText } from '../common/storable-text.js';
import { PendingHitlState, RagTrace } from '../trace/trace.protocol.js';
import { RUN_STATUSES, type RunStatus } from './run.repository.js';

export const CHAT_MESSAGE_MAX_LENGTH = 8000;

/**
 * Request examples that work when executed as they are: none names a
 * `session_id`, which would belong to whoever used it first.
 */
export const CHAT_REQUEST_EXAMPLES = {
  new_session: { summary: 'Start a new session', value: { message: 'What is the warranty period?' } },
};

export class ChatRequest {
  @ApiProperty({ description: 'The user message', minLength: 1, maxLength: CHAT_MESSAGE_MAX_LENGTH, example: 'What is the warranty period?' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(CHAT_MESSAGE_MAX_LENGTH)
  @IsStorableText({ requireVisible: true })
  message: string;

  @ApiPropertyOptional({ description: 'Existing session; absent starts a new one', format: 'uuid' })
  @IsOptional()
  @LowercaseId()
  @IsUUID()
  session_id?: string;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_NAMED_COLLECTIONS,
    description: `${COLLECTION_IDS_DESCRIPTION}. Absent: those saved on the session (PATCH /api/sessions/{id}), if any`,
  })
  @IsOptional()
  @IsCollectionIdList()
  collection_ids?: string[] | null;
}

export class ChatResponse {
  @ApiProperty({ description: 'The answer' })
  response: string;

  @ApiProperty({ type: () => RagTrace, nullable: true })
  rag_trace: RagTrace | null;

  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty({ type: () => PendingHitlState, nullable: true })
  pending_hitl: PendingHitlState | null;
}

export class RunInfo {
  @ApiProperty({ format: 'uuid' })
  run_id: string;

  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty({
    enum: RUN_STATUSES,
    enumName: 'RunStatus',
    description:
      "`running`; or how it ended: `done`, `interrupted` (paused for the user; or cut off by its instance's shutdown, its message kept and nothing waiting for the user), `error`, `abandoned` (its instance died), `cancelled`",
  })
  status: RunStatus;

  @ApiProperty({ description: 'ISO 8601 time the run started' })
  started_at: string;

  @ApiProperty({ type: String, nullable: true, description: 'ISO 8601 time the run ended; null while it runs' })
  finished_at: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The message the run answers (the user's question), so a client rejoining it shows the question before the turn is stored; null for a run started before it was kept",
  })
  message: string | null;
}
