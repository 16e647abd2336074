import { Body, Controller, Param, Patch, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import { RequestError } from '../common/coded-error.js';
import { SessionIdParams, SessionInfo, SessionUpdateBody } from '../session/session.dto.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { SessionWrites } from '../session/session-writes.service.js';
import { TraceNormalizationInterceptor } from '../trace/trace.interceptor.js';
import { TurnScopes } from './turn-scopes.service.js';

/**
 * PATCH /api/sessions/:session_id, beside the session module's routes: here
 * rather than there because the knowledge collections a session saves are
 * checked readable by the caller (the knowledge module's question, which the
 * session module does not ask).
 */
@ApiTags('sessions')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@UseInterceptors(TraceNormalizationInterceptor)
@Controller('api/sessions')
export class SessionSettingsController {
  constructor(
    private readonly writes: SessionWrites,
    private readonly scopes: TurnScopes,
  ) {}

  @Patch(':session_id')
  @ApiOperation({
    summary: 'Rename a session and (or) choose the knowledge collections its turns search',
    description:
      'The title is trimmed; `collection_ids` are saved for the turns that name none (null clears them: every collection the caller can read). ' +
      'A collection the caller cannot read answers 404 `collection_not_found`, now or at a later turn. The session keeps its place in the list.',
  })
  @ApiOkResponse({ type: SessionInfo, description: 'The session after the change' })
  @ApiErrorResponses('session_not_found', 'collection_not_found', 413)
  async update(@CurrentUser() user: AuthUser, @Param() params: SessionIdParams, @Body() body: SessionUpdateBody): Promise<SessionInfo> {
    const title = body.title ?? undefined;
    if (title === undefined && body.collection_ids === undefined) throw new RequestError('invalid_request', 'Send title, collection_ids or both');
    const collectionIds = body.collection_ids ? await this.scopes.requireReadable(user, body.collection_ids) : body.collection_ids;
    const session = await this.writes.updateSession(user.userId, params.session_id, { title, collectionIds });
    if (!session) throw new SessionNotFoundError(params.session_id);
    return session;
  }
}
