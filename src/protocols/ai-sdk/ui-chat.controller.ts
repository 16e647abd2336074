import { Body, Controller, Get, HttpCode, Inject, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { ApiProperty } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { TurnContext } from '../../agent/turn-context.js';
import { ChatService } from '../../chat/chat.service.js';
import { isTerminal } from '../../chat/run-event.js';
import { RunEventsService, RunStatusProbe } from '../../chat/run-events.service.js';
import { RunRegistry } from '../../chat/run-registry.service.js';
import { StartsTurn, STOPPED_FOLLOWING_EVENT, TurnDrain } from '../../chat/turn-drain.service.js';
import { TurnScopes } from '../../chat/turn-scopes.service.js';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import { JsonBodyGuard } from '../../common/json-body.guard.js';
import { SseWriter } from '../../common/sse-stream.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { SessionReads } from '../../session/session-reads.service.js';
import { SessionNotFoundError } from '../../session/session.errors.js';
import { parseUiChatRequest, UI_CHAT_ID_PATTERN, UI_CHAT_ID_RULE, UiChatRequest, UiMessage, UiMessagePart } from './ui-chat.dto.js';
import { UI_MESSAGE_STREAM_DONE, UiMessageMapper, uiMessageStreamTransport } from './ui-message-mapping.js';
import { UiSessionIds } from './ui-session-id.js';

export class UiChatIdParams {
  @ApiProperty({ description: 'The chat id, as in the POST body', pattern: UI_CHAT_ID_PATTERN.source })
  @IsString()
  @Matches(UI_CHAT_ID_PATTERN, { message: UI_CHAT_ID_RULE })
  id: string;
}

const UI_STREAM_DESCRIPTION =
  'The AI SDK UI message stream protocol (header `x-vercel-ai-ui-message-stream: v1`): Server-Sent Events whose `data` is one JSON chunk each, ' +
  'ending with `data: [DONE]`. `start` (messageId = the run id, messageMetadata `{run_id, session_id}`); `text-start`/`text-delta`/`text-end` for the answer; ' +
  '`data-step` (StepEvent), `data-tool` (ToolEvent; one part per call, its start replaced by its end), `data-trace` (RagTrace), ' +
  '`data-hitl` (PendingHitlState, with the clarification prompt also as text); then `finish`, or `error` (`errorText` = "<code>: <message>", codes as the SSE `error` event) and `finish`. ' +
  'A `: keep-alive` comment comes at least every 15 s.';

const UI_STREAM_OK = {
  description: 'The turn as a UI message stream',
  content: { 'text/event-stream': { schema: { type: 'string', description: UI_STREAM_DESCRIPTION } } },
};

/** The AI SDK's `useChat` / `DefaultChatTransport` over this service's chat turns. */
@ApiTags('chat')
@ApiBearerAuth()
@ApiExtraModels(UiChatRequest, UiMessage, UiMessagePart)
@Controller('api/chat/ui')
export class UiChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly runs: RunRegistry,
    private readonly events: RunEventsService,
    private readonly storage: SessionReads,
    private readonly sessionIds: UiSessionIds,
    private readonly drain: TurnDrain,
    private readonly scopes: TurnScopes,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(200)
  @RateLimit('chat')
  // Below the rate limit, so that it runs first: a refused body spends no turn (guards run bottom-up).
  @UseGuards(JsonBodyGuard)
  @StartsTurn()
  @ApiOperation({
    summary: 'Run a chat turn for the AI SDK (useChat): UI message stream',
    description:
      "Takes the body of the AI SDK's `DefaultChatTransport` (`id`, `messages`, `trigger`, `messageId`, and `collection_ids` from the transport's `body` option; other fields are ignored). " +
      "The turn's message is the text of the last message, which must be the user's; `id` names the session. " +
      `Errors before the stream opens are plain HTTP errors; after, an \`error\` chunk. ${UI_STREAM_DESCRIPTION}`,
  })
  @ApiBody({ type: UiChatRequest })
  @ApiProduces('text/event-stream')
  @ApiOkResponse(UI_STREAM_OK)
  @ApiErrorResponses(400, 401, 'session_not_found', 'collection_not_found', 'run_in_progress', 413, 415, 429, 503, 'shutting_down')
  async send(@CurrentUser() user: AuthUser, @Body() raw: unknown, @Res() res: Response): Promise<void> {
    // Validated here, not by the global pipe, which would refuse the extra fields a transport may add.
    const request = await parseUiChatRequest(raw);
    const sessionId = this.sessionIds.forChat(user.userId, request.chatId);
    const scope = await this.scopes.forTurn(user, request.collectionIds, sessionId);
    const turn = await this.chat.prepare(user.userId, request.message, sessionId);
    this.chat.startStreaming(turn, TurnContext.of(turn, 'stream', { scope }));
    await this.pipe(turn.runId, res, async () => 'running');
  }

  @Get(':id/stream')
  @ApiOperation({
    summary: "Resume a chat's stream (DefaultChatTransport.reconnectToStream)",
    description:
      "The session's running turn, replayed from its start and followed to its end; 204 when the session has no running turn (or does not exist yet). " + UI_STREAM_DESCRIPTION,
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse(UI_STREAM_OK)
  @ApiNoContentResponse({ description: 'No turn of this chat is running' })
  @ApiErrorResponses(400, 401, 'run_not_found', 'run_events_gone', 503, 'run_events_unavailable')
  async resume(@CurrentUser() user: AuthUser, @Param() params: UiChatIdParams, @Res() res: Response): Promise<void> {
    const sessionId = this.sessionIds.forChat(user.userId, params.id);
    const owner = await this.storage.sessionOwner(sessionId);
    if (owner !== null && owner !== user.userId) throw new SessionNotFoundError(sessionId);
    const runId = owner === null ? null : await this.runs.runningIn(sessionId);
    // A `running` row whose instance died is answered as over (status() marks it abandoned).
    if (!runId || (await this.runs.status(runId)) !== 'running') {
      res.status(204).end();
      return;
    }
    await this.pipe(runId, res, () => this.runs.status(runId));
  }

  /**
   * Writes a run's events, from its first, as a UI message stream until its
   * terminal event or until the client leaves (the run goes on without it).
   * A failure to read the events (503, 410) answers before the stream opens.
   */
  private async pipe(runId: string, res: Response, isRunning: RunStatusProbe): Promise<void> {
    const writer = new SseWriter(res, uiMessageStreamTransport(this.config.chat.sseHeartbeatMs));
    const mapper = new UiMessageMapper();
    const following = new AbortController();
    // Still open when the instance has drained (the run goes on elsewhere): the stream ends with an error chunk all the same.
    const unregister = this.drain.openStream(() => {
      following.abort();
      void writer.write(mapper.frames({ id: 0, event: 'error', data: STOPPED_FOLLOWING_EVENT }) + UI_MESSAGE_STREAM_DONE);
      writer.end();
    });
    try {
      const events = await this.events.follow(runId, 0, { status: isRunning, signal: AbortSignal.any([writer.signal, following.signal]) });
      writer.open();
      writer.startHeartbeat();
      for await (const event of events) {
        if (isTerminal(event)) unregister();
        await writer.write(mapper.frames(event));
      }
      if (!events.abandoned) await writer.write(UI_MESSAGE_STREAM_DONE);
    } finally {
      unregister();
      if (writer.opened) writer.end();
    }
  }
}
