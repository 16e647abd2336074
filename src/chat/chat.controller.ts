import { WHOLE_TURN_ERRORS } from './turn-route-errors.js';
import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res, UseGuards, UseInterceptors, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { AcceptsStreamTicket } from '../auth/stream-ticket.decorator.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { CHAT_REQUEST_EXAMPLES, ChatRequest, ChatResponse, RunInfo } from './chat.dto.js';
import { TraceNormalizationInterceptor } from '../trace/trace.interceptor.js';
import { TurnContext } from '../agent/turn-context.js';
import { ChatService } from './chat.service.js';
import { RunControl } from './run-control.service.js';
import { RunIdParams } from './run-id.params.js';
import { SSE_SCHEMA_MODELS, STREAM_EVENT_SCHEMA } from './sse-events.dto.js';
import { RunEventsService, RunStatusProbe } from './run-events.service.js';
import { RunRegistry } from './run-registry.service.js';
import { StreamTicketRunGuard } from './stream-ticket-run.guard.js';
import { SseWriter } from '../common/sse-stream.js';
import { chatSseTransport, formatSse, isTerminal, LAST_EVENT_ID_RULE, parseLastEventId } from './sse.js';
import { StartsTurn, stoppedFollowingSse, TurnDrain } from './turn-drain.service.js';
import { TurnScopes } from './turn-scopes.service.js';
import { RequestError } from '../common/coded-error.js';

const SSE_DESCRIPTION =
  'Server-Sent Events, each with `id` (monotonic within the run), `event` and JSON `data`: ' +
  '`metadata` (MetadataEvent) first; `step` (StepEvent); `token` (TokenEvent); `tool` (ToolEvent); ' +
  '`hitl` (HitlEvent); `trace` (TraceEvent); then `done` (DoneEvent) or `error` (ErrorEvent), after which the stream ends. ' +
  'A model failure during the stream arrives as an `error` event (`model_error`, `model_timeout`…), not as an HTTP status. ' +
  'A `: heartbeat` comment line comes at least every 15 s.';

/** The 200 answer of a stream route: one schema per event, each `{id, event, data}`. */
const SSE_OK_RESPONSE = {
  description: "The run's events as Server-Sent Events; each event is one of the `{id, event, data}` shapes below",
  content: { 'text/event-stream': { schema: STREAM_EVENT_SCHEMA } },
};

@ApiTags('chat')
@ApiBearerAuth()
@ApiExtraModels(...SSE_SCHEMA_MODELS)
@Controller('api/chat')
export class ChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly runs: RunRegistry,
    private readonly events: RunEventsService,
    private readonly drain: TurnDrain,
    private readonly control: RunControl,
    private readonly scopes: TurnScopes,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('runs/:run_id')
  @ApiOperation({ summary: 'A run of the caller: its session, status and times (find it from SessionInfo.active_run or a 409 body)' })
  @ApiOkResponse({ type: RunInfo, description: 'The run, its status and times' })
  @ApiErrorResponses(400, 401, 'run_not_found', 503)
  async run(@CurrentUser() user: AuthUser, @Param() params: RunIdParams): Promise<RunInfo> {
    const run = await this.runs.info(params.run_id, user.userId);
    if (!run) throw new RequestError('run_not_found', `Run ${params.run_id} not found`);
    return run;
  }

  @Post('runs/:run_id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a run',
    description:
      'Aborts the model and tool calls of the run on whichever instance runs it, keeps the human message and the answer so far ' +
      '(marked `cancelled`), ends its stream with an `error` event of code `cancelled`, and frees the session before answering. ' +
      'Idempotent: a run that already ended answers as it ended.',
  })
  @ApiOkResponse({ type: RunInfo, description: 'The run after the cancel (`cancelled`, or how it had already ended)' })
  @ApiErrorResponses(400, 401, 'run_not_found', 413, 429, 503)
  @RateLimit('run_control')
  async cancel(@CurrentUser() user: AuthUser, @Param() params: RunIdParams): Promise<RunInfo> {
    const run = await this.control.cancel(params.run_id, user.userId);
    if (!run) throw new RequestError('run_not_found', `Run ${params.run_id} not found`);
    return run;
  }

  @Post()
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @UseInterceptors(TraceNormalizationInterceptor)
  @ApiOperation({ summary: 'Run a chat turn and answer it whole' })
  @ApiBody({ type: ChatRequest, examples: CHAT_REQUEST_EXAMPLES })
  @ApiOkResponse({ type: ChatResponse, description: 'The answer, its RAG trace, and the question put to the user if the turn paused' })
  @ApiErrorResponses(...WHOLE_TURN_ERRORS)
  async send(@CurrentUser() user: AuthUser, @Body() body: ChatRequest): Promise<ChatResponse> {
    // The collections are checked before the turn claims its session: a 404 leaves nothing behind.
    const scope = await this.scopes.forTurn(user, body.collection_ids, body.session_id);
    const turn = await this.chat.prepare(user.userId, body.message, body.session_id);
    // A failed turn answers by its code (coded-error.ts): 502/504 for the model, 503 for storage, 404 for a deleted session.
    const result = await this.chat.runSync(turn, TurnContext.of(turn, 'sync', { scope }));
    return { response: result.response, rag_trace: result.rag_trace, session_id: result.session_id, pending_hitl: result.pending_hitl };
  }

  @Post('stream')
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'Run a chat turn, streaming its events (SSE)', description: SSE_DESCRIPTION })
  @ApiBody({ type: ChatRequest, examples: CHAT_REQUEST_EXAMPLES })
  @ApiOkResponse(SSE_OK_RESPONSE)
  @ApiErrorResponses(400, 401, 'session_not_found', 'collection_not_found', 'run_in_progress', 413, 429, 503, 'shutting_down')
  async stream(@CurrentUser() user: AuthUser, @Body() body: ChatRequest, @Res() res: Response): Promise<void> {
    // The collections, ownership and the one-run-per-session rule answer as plain HTTP errors, before the stream opens.
    const scope = await this.scopes.forTurn(user, body.collection_ids, body.session_id);
    const turn = await this.chat.prepare(user.userId, body.message, body.session_id);
    const writer = new SseWriter(res, chatSseTransport(this.config.chat.sseHeartbeatMs));
    writer.open();
    this.chat.startStreaming(turn, TurnContext.of(turn, 'stream', { scope }));
    await this.pipe(turn.runId, 0, writer, async () => 'running');
  }

  @Get('runs/:run_id/stream')
  @AcceptsStreamTicket()
  @UseGuards(StreamTicketRunGuard)
  @ApiOperation({
    summary: "Rejoin a run's event stream",
    description: `Replays the events after \`Last-Event-ID\` and follows the rest, from any instance. ${SSE_DESCRIPTION}`,
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Id of the last event received: a non-negative integer of at most 9 digits (400 otherwise); absent or empty replays from the start',
  })
  @ApiOkResponse(SSE_OK_RESPONSE)
  @ApiErrorResponses(400, 401, 'run_not_found', 'run_events_gone', 503, 'run_events_unavailable')
  async rejoin(@CurrentUser() user: AuthUser, @Param() params: RunIdParams, @Headers('last-event-id') lastEventId: string | undefined, @Res() res: Response): Promise<void> {
    const afterId = parseLastEventId(lastEventId);
    if (afterId === 'invalid') throw new RequestError('invalid_request', LAST_EVENT_ID_RULE);
    const run = await this.runs.find(params.run_id, user.userId);
    if (!run) throw new RequestError('run_not_found', `Run ${params.run_id} not found`);
    const isRunning = () => this.runs.status(params.run_id);
    const writer = new SseWriter(res, chatSseTransport(this.config.chat.sseHeartbeatMs));
    await this.pipe(params.run_id, afterId === 'absent' ? 0 : afterId, writer, isRunning, run.status !== 'running');
  }

  /** Writes a run's events to an SSE response until a terminal event or until the client leaves. */
  private async pipe(runId: string, afterId: number, writer: SseWriter, isRunning: RunStatusProbe, finished = false): Promise<void> {
    const following = new AbortController();
    // Still open when the instance has drained (the run goes on elsewhere): the stream ends with a terminal event all the same.
    const unregister = this.drain.openStream(() => {
      following.abort();
      void writer.write(stoppedFollowingSse());
      writer.end();
    });
    try {
      // Before the stream opened, RunEventsUnavailableError (503) and RunEventsGoneError (410) answer by their codes.
      const events = await this.events.follow(runId, afterId, { status: isRunning, signal: AbortSignal.any([writer.signal, following.signal]) });
      if (!writer.opened && events.backlog === 0 && finished) {
        throw new RequestError('run_events_gone', `The events of run ${runId} are no longer kept, or were all received already`);
      }
      writer.open();
      writer.startHeartbeat();
      await events.drainTo((batch) => {
        if (batch.some(isTerminal)) unregister();
        return writer.writeOrWait(batch.length === 1 ? formatSse(batch[0]) : batch.map(formatSse).join(''));
      });
    } finally {
      unregister();
      if (writer.opened) writer.end();
    }
  }
}
