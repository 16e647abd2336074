import { Controller, Delete, Get, NotFoundException, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import {
  SessionDeleteResponse,
  SessionIdParams,
  SessionListQuery,
  SessionListResponse,
  SessionMessagesResponse,
} from './session.dto.js';
import { TraceNormalizationInterceptor } from '../trace/trace.interceptor.js';
import { ConversationStorage } from './conversation-storage.service.js';

@ApiTags('sessions')
@ApiBearerAuth()
@ApiErrorResponses(400, 401)
@UseInterceptors(TraceNormalizationInterceptor)
@Controller('api/sessions')
export class SessionController {
  constructor(private readonly storage: ConversationStorage) {}

  @Get()
  @ApiOperation({ summary: "The caller's sessions, newest first, paginated" })
  @ApiOkResponse({ type: SessionListResponse })
  list(@CurrentUser() user: AuthUser, @Query() query: SessionListQuery): Promise<SessionListResponse> {
    return this.storage.listSessionInfos(user.userId, query);
  }

  @Get(':session_id/messages')
  @ApiOperation({ summary: 'A session transcript in conversation order' })
  @ApiOkResponse({ type: SessionMessagesResponse })
  @ApiErrorResponses(404)
  async messages(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams): Promise<SessionMessagesResponse> {
    const messages = await this.storage.getSessionMessages(user.userId, params.session_id);
    if (!messages) throw new NotFoundException(`Session ${params.session_id} not found`);
    return { session_id: params.session_id, messages };
  }

  @Delete(':session_id')
  @ApiOperation({ summary: 'Delete a session and all its messages' })
  @ApiOkResponse({ type: SessionDeleteResponse })
  @ApiErrorResponses(404)
  async remove(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams): Promise<SessionDeleteResponse> {
    const deleted = await this.storage.deleteSession(user.userId, params.session_id);
    if (!deleted) throw new NotFoundException(`Session ${params.session_id} not found`);
    return { session_id: params.session_id, message: 'Session deleted' };
  }
}
