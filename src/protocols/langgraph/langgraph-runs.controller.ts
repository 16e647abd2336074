import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { isTerminal, RunEvent } from '../../chat/run-event.js';
import { RunEventsGoneError, RunEventsService, RunStatusProbe } from '../../chat/run-events.service.js';
import { RunInfoRecord, RunRegistry } from '../../chat/run-registry.service.js';
import { StartsTurn, TurnDrain } from '../../chat/turn-drain.service.js';
import { RequestError } from '../../common/coded-error.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { optionalEnum, pageOf, threadIdOf } from './langgraph-params.js';
import { LgRunRequest, parseRunRequest, parseStreamModes } from './langgraph-request.js';
import { LangGraphRuns, runOf } from './langgraph-runs.service.js';
import { lgSseWriter, runPathOf } from './langgraph-sse.js';
import { JOIN_DEFAULT_MODES, LG_LAST_EVENT_ID_RULE, LgCursor, LgStreamMapper, parseLgLastEventId, RunView } from './langgraph-stream.js';
import { JsonBodyGuard } from '../../common/json-body.guard.js';
import { PlainQueryGuard } from './plain-query.guard.js';

/** Runs of the LangGraph Server API: a run on a thread is a chat turn of its session; a thread-less run is stateless. */
@ApiTags('langgraph')
@ApiBearerAuth()
@UseGuards(PlainQueryGuard, JsonBodyGuard)
@Controller('langgraph')
export class LangGraphRunsController {
  constructor(
    private readonly runs: LangGraphRuns,
    private readonly registry: RunRegistry,
    private readonly events: RunEventsService,
    private readonly drain: TurnDrain,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('threads/:thread_id/runs/stream')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'Run the thread, streaming its events (SSE: metadata, values, messages, updates, custom, error, end)' })
  async stream(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown, @Res() res: Response): Promise<void> {
    const threadId = threadIdOf(id);
    const request = await this.request(user, threadId, raw);
    const waiting = new AbortController();
    res.on('close', () => waiting.abort());
    const { runId, started } = await this.runs.start(user, threadId, request, waiting.signal);
    const view = await started;
    if (waiting.signal.aborted) {
      // The client left while the run was being started (a cancel, a queue): it goes on only if it was to.
      if (request.onDisconnect === 'cancel') await this.runs.cancel(user, threadId, runId, 'interrupt');
      return;
    }
    await this.pipe(res, view, request.modes, { afterEvent: 0, skip: 0 }, () => this.registry.status(runId), request.onDisconnect === 'cancel' ? user : null);
  }

  @Post('threads/:thread_id/runs')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'Start a run of the thread in the background: the Run (join it, or stream it with its id)' })
  async create(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    const threadId = threadIdOf(id);
    const request = await this.request(user, threadId, raw);
    const { runId, queued, started } = await this.runs.start(user, threadId, request, new AbortController().signal);
    // A queued run answers at once, `pending`; it starts when the thread is free.
    if (!queued) await started;
    res.setHeader('Content-Location', runPathOf(threadId, runId));
    const run = await this.runs.run(user, threadId, runId);
    if (!run) throw new RequestError('run_not_found', `Run ${runId} not found`);
    return runOf(run, { multitask_strategy: request.strategy, metadata: request.metadata });
  }

  @Post('threads/:thread_id/runs/wait')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'Run the thread and answer its final values (`__interrupt__` when it paused; `__error__` when it failed)' })
  async wait(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    const threadId = threadIdOf(id);
    const request = await this.request(user, threadId, raw);
    const { runId, started } = await this.runs.start(user, threadId, request, new AbortController().signal);
    const view = await started;
    res.setHeader('Content-Location', runPathOf(threadId, runId));
    return this.finalValues(view);
  }

  @Post('runs/stream')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'A thread-less run, streamed: `input.messages` is the whole conversation; nothing is stored; leaving stops it' })
  async streamStateless(@CurrentUser() user: AuthUser, @Body() raw: unknown, @Res() res: Response): Promise<void> {
    const request = await parseRunRequest(raw, async () => null);
    const stop = new AbortController();
    let writer: ReturnType<typeof lgSseWriter> | null = null;
    let mapper: LgStreamMapper | null = null;
    res.on('close', () => {
      if (!res.writableFinished) stop.abort();
    });
    await this.runs.stateless(
      user,
      request,
      async (event, view) => {
        writer ??= lgSseWriter(res, this.config.chat.sseHeartbeatMs, runPathOf(null, view.runId));
        mapper ??= new LgStreamMapper(view, request.modes);
        if (!writer.opened) {
          writer.open();
          writer.startHeartbeat();
        }
        await writer.write(await mapper.sse(event));
      },
      AbortSignal.any([stop.signal, this.drain.signal]),
    );
    (writer as ReturnType<typeof lgSseWriter> | null)?.end();
  }

  @Post('runs/wait')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({ summary: 'A thread-less run: its final values; nothing is stored' })
  async waitStateless(@CurrentUser() user: AuthUser, @Body() raw: unknown, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    const request = await parseRunRequest(raw, async () => null);
    let mapper: LgStreamMapper | null = null;
    let values: Record<string, unknown> = {};
    // Nothing is kept of a thread-less run: a client that leaves stops it.
    const left = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) left.abort();
    });
    await this.runs.stateless(
      user,
      request,
      async (event, view) => {
        if (!mapper) {
          mapper = new LgStreamMapper(view, new Set());
          res.setHeader('Content-Location', runPathOf(null, view.runId));
        }
        await mapper.sse(event);
        if (isTerminal(event)) values = await mapper.finalValues(event);
      },
      AbortSignal.any([left.signal, this.drain.signal]),
    );
    return values;
  }

  @Get('threads/:thread_id/runs')
  @ApiOperation({ summary: "The thread's runs, newest first (status: pending, running, success, error, interrupted)" })
  async list(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Query() query: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const threadId = threadIdOf(id);
    await this.runs.thread(user, threadId);
    const runs = await this.runs.list(user, threadId, pageOf(query.limit, query.offset, 10, 1000));
    return runs.map((run) => runOf(run));
  }

  @Get('threads/:thread_id/runs/:run_id')
  @ApiOperation({ summary: 'A run of the thread' })
  async get(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Param('run_id') rid: string): Promise<Record<string, unknown>> {
    const run = await this.runs.run(user, threadIdOf(id), threadIdOf(rid, 'run_id'));
    if (!run) throw new RequestError('run_not_found', `Run ${rid} not found`);
    return runOf(run);
  }

  @Get('threads/:thread_id/runs/:run_id/join')
  @ApiOperation({ summary: "Wait for a run's end: its final values" })
  async join(
    @CurrentUser() user: AuthUser,
    @Param('thread_id') id: string,
    @Param('run_id') rid: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const { view } = await this.existing(user, id, rid, res);
    return this.finalValues(view);
  }

  @Get('threads/:thread_id/runs/:run_id/stream')
  @ApiOperation({ summary: "Join a run's stream from any instance: Last-Event-ID -1 replays it all, an event id resumes after it; a finished run is replayed" })
  async joinStream(
    @CurrentUser() user: AuthUser,
    @Param('thread_id') id: string,
    @Param('run_id') rid: string,
    @Query() query: Record<string, unknown>,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const cursor = parseLgLastEventId(lastEventId);
    if (!cursor) throw new RequestError('invalid_request', LG_LAST_EVENT_ID_RULE);
    const { run, view } = await this.existing(user, id, rid, res);
    const modes = parseStreamModes(query.stream_mode, [...JOIN_DEFAULT_MODES]);
    const cancelOnLeave = query.cancel_on_disconnect === '1' || query.cancel_on_disconnect === 'true';
    await this.pipe(res, view, modes, cursor, () => this.registry.status(run.run_id), cancelOnLeave ? user : null);
  }

  @Post('threads/:thread_id/runs/:run_id/cancel')
  @HttpCode(202)
  @RateLimit('run_control')
  @ApiOperation({ summary: 'Cancel a run (action=interrupt keeps what it said, marked cancelled; action=rollback removes it); 202, or 204 with wait=1' })
  async cancel(
    @CurrentUser() user: AuthUser,
    @Param('thread_id') id: string,
    @Param('run_id') rid: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const action = optionalEnum(query.action, ['interrupt', 'rollback'] as const, 'action') ?? 'interrupt';
    const run = await this.runs.cancel(user, threadIdOf(id), threadIdOf(rid, 'run_id'), action);
    if (!run) throw new RequestError('run_not_found', `Run ${rid} not found`);
    // The cancel has waited for the run to stop already.
    if (query.wait === '1' || query.wait === 'true') res.status(204);
  }

  private async request(user: AuthUser, threadId: string, raw: unknown): Promise<LgRunRequest> {
    return parseRunRequest(raw, () => this.runs.suggestedAnswer(user, threadId));
  }

  /** The run, once it has started (a queued one is waited for while the client stays). */
  private async existing(user: AuthUser, threadId: string, runId: string, res: Response): Promise<{ run: RunInfoRecord; view: RunView }> {
    const left = new AbortController();
    res.on('close', () => left.abort());
    const found = await this.runs.existing(user, threadIdOf(threadId), threadIdOf(runId, 'run_id'), AbortSignal.any([left.signal, this.drain.signal]));
    if (!found) throw new RequestError('run_not_found', `Run ${runId} not found`);
    return found;
  }

  /** The run's events from its first; an ended run whose events expired is told from what it stored (LangGraphRuns.storedEvents). */
  private async followOrStored(view: RunView, isRunning: RunStatusProbe, signal: AbortSignal): Promise<AsyncIterable<RunEvent> | RunEvent[]> {
    try {
      return await this.events.follow(view.runId, 0, { status: isRunning, signal });
    } catch (error) {
      if (!(error instanceof RunEventsGoneError)) throw error;
      const stored = await this.runs.storedEvents(view);
      if (!stored) throw error;
      return stored;
    }
  }

  /** Follows a run to its end and answers its final values. */
  private async finalValues(view: RunView): Promise<Record<string, unknown>> {
    const mapper = new LgStreamMapper(view, new Set());
    const events = await this.followOrStored(view, () => this.registry.status(view.runId), this.drain.signal);
    let last: RunEvent | null = null;
    for await (const event of events) {
      await mapper.sse(event);
      last = event;
    }
    if (!last || !isTerminal(last)) throw new RequestError('run_events_unavailable', `The end of run ${view.runId} could not be read; join it again`);
    return mapper.finalValues(last);
  }

  /**
   * Writes a run's events as the LangGraph stream, from its first (the
   * cursor skips what the reader has), until its end or until the reader
   * leaves; a reader who asked for it (`on_disconnect: cancel`) cancels the
   * run by leaving. When the instance drains, the stream closes without
   * `end`: the SDK asks for the run's status and joins again elsewhere.
   */
  private async pipe(res: Response, view: RunView, modes: Set<string>, cursor: LgCursor, isRunning: RunStatusProbe, cancelOnLeave: AuthUser | null): Promise<void> {
    const writer = lgSseWriter(res, this.config.chat.sseHeartbeatMs, runPathOf(view.threadId, view.runId));
    const mapper = new LgStreamMapper(view, modes, cursor);
    const following = new AbortController();
    const unregister = this.drain.openStream(() => {
      following.abort();
      writer.end();
    });
    let ended = false;
    try {
      const events = await this.followOrStored(view, isRunning, AbortSignal.any([writer.signal, following.signal]));
      writer.open();
      writer.startHeartbeat();
      for await (const event of events) {
        if (isTerminal(event)) {
          ended = true;
          unregister();
        }
        await writer.write(await mapper.sse(event));
      }
    } finally {
      unregister();
      if (!ended && cancelOnLeave && writer.signal.aborted && !following.signal.aborted) {
        void this.runs.cancel(cancelOnLeave, view.threadId!, view.runId, 'interrupt').catch(() => undefined);
      }
      if (writer.opened) writer.end();
    }
  }
}
