import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { RequestError } from '../../common/coded-error.js';
import { SessionReads } from '../../session/session-reads.service.js';
import { SESSION_THREAD_STATUSES, SessionThreadStatus, SessionThreads, THREAD_SORT_COLUMNS, ThreadSortColumn } from '../../session/session-threads.service.js';
import { SessionWrites } from '../../session/session-writes.service.js';
import { bodyOf, isRecord, METADATA_MAX_BYTES, metadataOf, optionalEnum, pageOf, threadIdOf } from './langgraph-params.js';
import { LgThreadState, seqOfCheckpoint, threadOf, ThreadStates } from './langgraph-state.js';
import { LangGraphRuns } from './langgraph-runs.service.js';
import { JsonBodyGuard } from '../../common/json-body.guard.js';
import { PlainQueryGuard } from './plain-query.guard.js';

const HISTORY_MAX = 100;

/** Threads of the LangGraph Server API: a thread is a session of the caller. */
@ApiTags('langgraph')
@ApiBearerAuth()
@UseGuards(PlainQueryGuard, JsonBodyGuard)
@Controller('langgraph/threads')
export class LangGraphThreadsController {
  constructor(
    private readonly threads: SessionThreads,
    private readonly reads: SessionReads,
    private readonly writes: SessionWrites,
    private readonly runs: LangGraphRuns,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a thread (an empty session): {thread_id?, metadata?, if_exists?: raise|do_nothing}' })
  async create(@CurrentUser() user: AuthUser, @Body() raw: unknown): Promise<Record<string, unknown>> {
    const body = bodyOf(raw);
    const threadId = body.thread_id === undefined || body.thread_id === null ? crypto.randomUUID() : threadIdOf(body.thread_id, 'thread_id');
    const metadata = metadataOf(body.metadata);
    const ifExists = optionalEnum(body.if_exists, ['raise', 'do_nothing'] as const, 'if_exists') ?? 'raise';
    const outcome = await this.threads.create(user.userId, threadId, metadata);
    if (outcome === 'exists') {
      const existing = await this.threads.get(user.userId, threadId);
      if (!existing || ifExists === 'raise') throw new RequestError('thread_exists', `Thread ${threadId} already exists`);
      return threadOf(existing, await this.reads.getSessionMessages(user.userId, threadId));
    }
    return threadOf(await this.runs.thread(user, threadId), []);
  }

  @Post('search')
  @HttpCode(200)
  @ApiOperation({ summary: "Search the caller's threads: {ids?, metadata?, status?, limit?, offset?, sort_by?, sort_order?}" })
  async search(@CurrentUser() user: AuthUser, @Body() raw: unknown, @Res({ passthrough: true }) res: Response): Promise<Array<Record<string, unknown>>> {
    const body = bodyOf(raw);
    const { limit, offset } = pageOf(body.limit, body.offset, 10, 1000);
    const metadata = metadataOf(body.metadata);
    if (body.ids !== undefined && (!Array.isArray(body.ids) || body.ids.length > 1000)) throw new RequestError('invalid_request', 'ids must be a list of thread ids');
    const match = {
      ids: Array.isArray(body.ids) ? body.ids.map((id, i) => threadIdOf(id, `ids[${i}]`)) : undefined,
      metadata,
      status: optionalEnum(body.status, SESSION_THREAD_STATUSES, 'status') as SessionThreadStatus | undefined,
    };
    const found = await this.threads.search(user.userId, {
      ...match,
      limit,
      offset,
      sortBy: (optionalEnum(body.sort_by, THREAD_SORT_COLUMNS, 'sort_by') ?? 'updated_at') as ThreadSortColumn,
      sortOrder: optionalEnum(body.sort_order, ['asc', 'desc'] as const, 'sort_order') ?? 'desc',
    });
    res.setHeader('X-Pagination-Total', String(await this.threads.count(user.userId, match)));
    if (found.length === limit) res.setHeader('X-Pagination-Next', String(offset + limit));
    return Promise.all(found.map(async (thread) => threadOf(thread, await this.reads.getSessionMessages(user.userId, thread.session_id), false)));
  }

  @Post('count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: "Count the caller's threads matching {metadata?, status?}" })
  async count(@CurrentUser() user: AuthUser, @Body() raw: unknown): Promise<number> {
    const body = bodyOf(raw);
    return this.threads.count(user.userId, {
      metadata: metadataOf(body.metadata),
      status: optionalEnum(body.status, SESSION_THREAD_STATUSES, 'status') as SessionThreadStatus | undefined,
    });
  }

  @Get(':thread_id')
  @ApiOperation({ summary: 'A thread: {thread_id, status (idle, busy, interrupted, error), metadata, values, interrupts, …}' })
  async get(@CurrentUser() user: AuthUser, @Param('thread_id') id: string): Promise<Record<string, unknown>> {
    const threadId = threadIdOf(id);
    const thread = await this.runs.thread(user, threadId);
    return threadOf(thread, await this.reads.getSessionMessages(user.userId, threadId));
  }

  @Patch(':thread_id')
  @ApiOperation({ summary: "Merge {metadata} into the thread's metadata" })
  async update(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown): Promise<Record<string, unknown>> {
    const threadId = threadIdOf(id);
    const body = bodyOf(raw);
    const merged = await this.threads.mergeMetadata(user.userId, threadId, metadataOf(body.metadata), METADATA_MAX_BYTES);
    if (merged === 'missing') throw new RequestError('thread_not_found', `Thread ${threadId} not found`);
    if (merged === 'too_large') throw new RequestError('invalid_request', `metadata: the thread's metadata would be over ${METADATA_MAX_BYTES} bytes of JSON`);
    return this.get(user, threadId);
  }

  @Delete(':thread_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a thread: the session, its messages and runs' })
  async remove(@CurrentUser() user: AuthUser, @Param('thread_id') id: string): Promise<void> {
    const threadId = threadIdOf(id);
    if (!(await this.writes.deleteSession(user.userId, threadId))) throw new RequestError('thread_not_found', `Thread ${threadId} not found`);
  }

  @Get(':thread_id/state')
  @ApiOperation({ summary: "The thread's latest state: {values: {messages}, next, tasks (a paused question's interrupt), checkpoint, parent_checkpoint, metadata, created_at}" })
  async state(@CurrentUser() user: AuthUser, @Param('thread_id') id: string): Promise<LgThreadState> {
    return (await this.states(user, threadIdOf(id))).head();
  }

  @Get(':thread_id/state/:checkpoint_id')
  @ApiOperation({ summary: "The thread's state at a checkpoint" })
  async stateAt(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Param('checkpoint_id') checkpointId: string): Promise<LgThreadState> {
    return this.stateAtCheckpoint(user, threadIdOf(id), checkpointId);
  }

  @Post(':thread_id/state/checkpoint')
  @HttpCode(200)
  @ApiOperation({ summary: "The thread's state at {checkpoint: {checkpoint_id}}" })
  async stateAtPosted(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown): Promise<LgThreadState> {
    const checkpoint = isRecord(raw) && isRecord(raw.checkpoint) ? raw.checkpoint.checkpoint_id : undefined;
    if (typeof checkpoint !== 'string') throw new RequestError('invalid_request', 'checkpoint.checkpoint_id must be a checkpoint id');
    return this.stateAtCheckpoint(user, threadIdOf(id), checkpoint);
  }

  @Post(':thread_id/state')
  @HttpCode(405)
  @ApiOperation({ summary: 'Not supported: a thread changes by its runs only (405)' })
  updateState(): never {
    throw new RequestError('not_supported', "Updating a thread's state directly is not supported: run the thread (runs.stream, runs.wait) instead");
  }

  @Post(':thread_id/history')
  @HttpCode(200)
  @ApiOperation({ summary: "The thread's states, newest first: {limit?, before?: checkpoint id}" })
  async history(@CurrentUser() user: AuthUser, @Param('thread_id') id: string, @Body() raw: unknown): Promise<LgThreadState[]> {
    const body = bodyOf(raw);
    const { limit } = pageOf(body.limit, 0, 10, HISTORY_MAX);
    const before = isRecord(body.before) && isRecord(body.before.configurable) ? body.before.configurable.checkpoint_id : body.before;
    if (before !== undefined && before !== null && (typeof before !== 'string' || before.length > 64)) {
      throw new RequestError('invalid_request', 'before must be a checkpoint id, or {configurable: {checkpoint_id}}');
    }
    return (await this.states(user, threadIdOf(id), false)).newestFirst(limit, typeof before === 'string' ? before : undefined);
  }

  private async states(user: AuthUser, threadId: string, withTraces = true): Promise<ThreadStates> {
    const thread = await this.runs.thread(user, threadId);
    return new ThreadStates(thread, (await this.reads.getSessionMessages(user.userId, threadId)) ?? [], withTraces);
  }

  private async stateAtCheckpoint(user: AuthUser, threadId: string, checkpointId: string): Promise<LgThreadState> {
    const thread = await this.runs.thread(user, threadId);
    const messages = (await this.reads.getSessionMessages(user.userId, threadId)) ?? [];
    const seq = messages.length === 0 ? null : seqOfCheckpoint(checkpointId, messages);
    if (seq === null) throw new RequestError('checkpoint_not_found', `Checkpoint ${checkpointId.slice(0, 64)} not found in thread ${threadId}`);
    return new ThreadStates(thread, messages).at(seq);
  }
}
