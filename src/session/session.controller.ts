import { Body, Controller, Delete, Get, Param, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import {
  MessageFeedbackBody,
  MessageIdParams,
  MessageInfo,
  SessionDeleteResponse,
  SessionIdParams,
  SessionInfo,
  SessionListQuery,
  SessionListResponse,
  SessionMessagesQuery,
  SessionMessagesResponse,
} from './session.dto.js';
import { TraceNormalizationInterceptor } from '../trace/trace.interceptor.js';
import { SessionReads } from './session-reads.service.js';
import { SessionWrites } from './session-writes.service.js';
import { RequestError } from '../common/coded-error.js';
import { SessionNotFoundError } from './session.errors.js';

/** PATCH /api/sessions/:session_id is the chat module's (SessionSettingsController): it checks the knowledge collections a session may save. */
@ApiTags('sessions')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@UseInterceptors(TraceNormalizationInterceptor)
@Controller('api/sessions')
export class SessionController {
  constructor(
    private readonly reads: SessionReads,
    private readonly writes: SessionWrites,
  ) {}

  @Get()
  @ApiOperation({ summary: "The caller's sessions, newest first, paginated, optionally filtered by title (`q`)" })
  @ApiOkResponse({ type: SessionListResponse, description: 'A page of sessions and the cursor of the next one' })
  list(@CurrentUser() user: AuthUser, @Query() query: SessionListQuery): Promise<SessionListResponse> {
    return this.reads.listSessionInfos(user.userId, query);
  }

  @Get(':session_id')
  @ApiOperation({ summary: 'One session of the caller, with its run in flight (`active_run`), wherever it is in the list' })
  @ApiOkResponse({ type: SessionInfo, description: 'The session' })
  @ApiErrorResponses('session_not_found')
  async one(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams): Promise<SessionInfo> {
    const session = await this.reads.getSessionInfo(user.userId, params.session_id);
    if (!session) throw new SessionNotFoundError(params.session_id);
    return session;
  }

  @Get(':session_id/messages')
  @ApiOperation({
    summary: 'A session transcript in conversation order: all of it, or with `limit` the page before `before`',
  })
  @ApiOkResponse({ type: SessionMessagesResponse, description: 'The messages, oldest first, and the `before` of the older page' })
  @ApiErrorResponses('session_not_found', 'invalid_cursor')
  async messages(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams, @Query() query: SessionMessagesQuery): Promise<SessionMessagesResponse> {
    const page = await this.reads.getSessionMessagePage(user.userId, params.session_id, query);
    if (!page) throw new SessionNotFoundError(params.session_id);
    return { session_id: params.session_id, messages: page.messages, next_before: page.next_before };
  }

  @Put(':session_id/messages/:message_id/feedback')
  @ApiOperation({ summary: "Set the caller's rating (and optional comment) of a message; replaces any earlier one" })
  @ApiOkResponse({ type: MessageInfo, description: 'The message with its feedback' })
  @ApiErrorResponses('session_not_found', 'message_not_found', 413)
  async setFeedback(@CurrentUser() user: AuthUser, @Param() params: MessageIdParams, @Body() body: MessageFeedbackBody): Promise<MessageInfo> {
    const message = await this.writes.setMessageFeedback(user.userId, params.session_id, params.message_id, {
      rating: body.rating,
      comment: body.comment ? body.comment : null,
    });
    if (!message) throw new RequestError('message_not_found', `Message ${params.message_id} not found in session ${params.session_id}`);
    return message;
  }

  @Delete(':session_id/messages/:message_id/feedback')
  @ApiOperation({ summary: "Clear the caller's feedback on a message (idempotent)" })
  @ApiOkResponse({ type: MessageInfo, description: 'The message, its feedback now null' })
  @ApiErrorResponses('session_not_found', 'message_not_found')
  async clearFeedback(@CurrentUser() user: AuthUser, @Param() params: MessageIdParams): Promise<MessageInfo> {
    const message = await this.writes.setMessageFeedback(user.userId, params.session_id, params.message_id, null);
    if (!message) throw new RequestError('message_not_found', `Message ${params.message_id} not found in session ${params.session_id}`);
    return message;
  }

  @Delete(':session_id')
  @ApiOperation({ summary: 'Delete a session and all its messages' })
  @ApiOkResponse({ type: SessionDeleteResponse, description: 'The session is gone' })
  @ApiErrorResponses('session_not_found')
  async remove(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams): Promise<SessionDeleteResponse> {
    const deleted = await this.writes.deleteSession(user.userId, params.session_id);
    if (!deleted) throw new SessionNotFoundError(params.session_id);
    return { session_id: params.session_id, message: 'Session deleted' };
  }
}
