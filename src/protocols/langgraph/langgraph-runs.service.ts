import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { TurnContext } from '../../agent/turn-context.js';
import type { AuthUser } from '../../auth/auth-user.js';
import { RunInProgressError, TurnFailedError } from '../../chat/chat.errors.js';
import { ChatService, HITL_ROUNDS_KEY, PENDING_HITL_KEY } from '../../chat/chat.service.js';
import { ConversationSummaryService, SUMMARY_KEY, SUMMARY_UPTO_KEY } from '../../chat/conversation-summary.service.js';
import { RunEvent, runEvent } from '../../chat/run-event.js';
import { RunEventsService } from '../../chat/run-events.service.js';
import { RunControl } from '../../chat/run-control.service.js';
import { RunInfoRecord, RunRegistry } from '../../chat/run-registry.service.js';
import { TurnDrain } from '../../chat/turn-drain.service.js';
import { TurnScopes } from '../../chat/turn-scopes.service.js';
import { CodedError, RequestError } from '../../common/coded-error.js';
import { SessionReads } from '../../session/session-reads.service.js';
import { SessionThread, SessionThreads } from '../../session/session-threads.service.js';
import type { MessageInfo } from '../../session/session.dto.js';
import { answerMessage, answerMessageId, humanMessage, LcMessage, questionMessageId, toLcMessage } from './langgraph-messages.js';
import { InputMessage, LgRunRequest, MultitaskStrategy } from './langgraph-request.js';
import { ASSISTANT_ID, GRAPH_ID, seqOfCheckpoint } from './langgraph-state.js';
import type { RunView } from './langgraph-stream.js';
import { PendingRunRepository, PendingRunRow } from './pending-run.repository.js';
import { OPENAI_CONVERSATION_MAX_LENGTH } from '../openai/openai-request.js';

/** How many times a run that cancels the thread's run (interrupt, rollback) tries to take the thread. */
const TAKE_ATTEMPTS = 20;

/** How often a queued run, or a reader waiting for one, looks again while the run ahead of it has not started yet. */
const QUEUE_POLL_MS = 100;

/** A run of the API: one of our runs, or one still queued (`pending`). */
export type LgRunRecord = Omit<RunInfoRecord, 'status'> & { status: RunInfoRecord['status'] | 'pending' };

/** A run that was started or queued: its id, and its view once it has started (rejects when it never does). */
export interface StartedRun {
  runId: string;
  queued: boolean;
  started: Promise<RunView>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The LangGraph status of one of our runs. */
export function lgRunStatus(status: LgRunRecord['status']): string {
  switch (status) {
    case 'pending':
    case 'running':
      return status;
    case 'done':
      return 'success';
    case 'interrupted':
    case 'cancelled':
      return 'interrupted';
    default:
      return 'error';
  }
}

/** A run as the API answers it. */
export function runOf(run: LgRunRecord, extra: { multitask_strategy?: string; metadata?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    run_id: run.run_id,
    thread_id: run.session_id,
    assistant_id: ASSISTANT_ID,
    created_at: run.started_at,
    updated_at: run.finished_at ?? run.started_at,
    status: lgRunStatus(run.status),
    metadata: extra.metadata ?? {},
    multitask_strategy: extra.multitask_strategy ?? 'reject',
    kwargs: {},
  };
}

/**
 * Runs of the LangGraph Server API over this service's chat turns: a run on
 * a thread is a turn of its session (claimed, streamed, committed and
 * cancelled as every turn is); a thread-less run is a stateless turn. The
 * multitask strategies decide what a run does when its thread is busy.
 */
@Injectable()
export class LangGraphRuns {
  constructor(
    private readonly chat: ChatService,
    private readonly runs: RunRegistry,
    private readonly control: RunControl,
    private readonly events: RunEventsService,
    private readonly threads: SessionThreads,
    private readonly reads: SessionReads,
    private readonly scopes: TurnScopes,
    private readonly pending: PendingRunRepository,
    private readonly drain: TurnDrain,
  ) {}

  /** The user's thread; thread_not_found otherwise (another user's included). */
  async thread(user: AuthUser, threadId: string): Promise<SessionThread> {
    const thread = await this.threads.get(user.userId, threadId);
    if (!thread) throw new RequestError('thread_not_found', `Thread ${threadId} not found`);
    return thread;
  }

  /** What `approve` answers to the thread's paused question: its first option. */
  async suggestedAnswer(user: AuthUser, threadId: string): Promise<string | null> {
    const thread = await this.threads.get(user.userId, threadId);
    return thread?.pending_hitl?.options?.[0] ?? null;
  }

  /**
   * Starts a run on the thread (creating the thread first with
   * `if_not_exists: "create"`). A busy thread: `reject` answers 409;
   * `interrupt` and `rollback` cancel its run (rollback removes what the
   * cancelled run kept) and take the thread; `enqueue` waits for its run to
   * end, on whichever instance it runs, then takes it.
   */
  async start(user: AuthUser, threadId: string, request: LgRunRequest, signal: AbortSignal): Promise<StartedRun> {
    let thread = await this.threads.get(user.userId, threadId);
    if (!thread) {
      if (request.ifNotExists !== 'create') throw new RequestError('thread_not_found', `Thread ${threadId} not found`);
      await this.threads.create(user.userId, threadId, { graph_id: GRAPH_ID, assistant_id: ASSISTANT_ID, ...request.metadata });
      thread = await this.thread(user, threadId);
    }
    if (request.resume && thread.status !== 'interrupted' && thread.status !== 'busy') {
      throw new RequestError('nothing_to_resume', `Thread ${threadId} has no interrupt to resume: send input.messages instead`);
    }
    const fork = request.checkpointId === null ? null : await this.forkPoint(user, thread, request, request.checkpointId);
    const message = request.message ?? fork?.question ?? null;
    if (message === null) throw new RequestError('invalid_request', "input.messages must end with the user's message (or send command.resume)");
    const scope = await this.scopes.forTurn(user, request.collectionIds, threadId);
    const begin = async (turn: Awaited<ReturnType<ChatService['prepare']>>): Promise<RunView> => {
      try {
        // The run holds the thread: the messages after the checkpoint go before it reads the thread.
        if (fork) await this.threads.truncate(user.userId, threadId, fork.keepSeq, await this.forkedMetadataKeys(user, threadId, fork.keepSeq));
        await this.threads.addMissingMetadata(user.userId, threadId, { graph_id: GRAPH_ID, assistant_id: ASSISTANT_ID });
      } catch (error) {
        // A run that could not start does not hold its thread until its heartbeat is found stale.
        await this.runs.finish(turn.runId, 'error', 'the run could not start').catch(() => undefined);
        throw error;
      }
      this.chat.startStreaming(turn, TurnContext.of(turn, 'stream', { scope, sampling: request.sampling }));
      // Read after the start: the run's own messages, once stored, are told apart by their run id.
      return this.view(user, threadId, turn.runId, turn.message);
    };
    const taken = await this.take(user, threadId, message, request.strategy, signal);
    if (taken) return { runId: taken.runId, queued: false, started: begin(taken) };
    // enqueue on a busy thread: the run is queued, known to every instance, and started here when its turn comes.
    const runId = randomUUID();
    if (!(await this.pending.insert(runId, threadId, user.userId))) throw new RequestError('thread_not_found', `Thread ${threadId} not found`);
    const started = this.startWhenFree(user, threadId, runId, message).then(begin);
    started.catch(() => undefined);
    return { runId, queued: true, started };
  }

  /** The user's run of the thread, started or queued; null when there is none. */
  async run(user: AuthUser, threadId: string, runId: string): Promise<LgRunRecord | null> {
    const run = await this.runs.info(runId, user.userId);
    if (run) return run.session_id === threadId ? run : null;
    const queued = await this.pending.find(runId, user.userId, this.runs.staleAfterMs);
    return queued && queued.session_id === threadId ? queuedRecord(queued) : null;
  }

  /** A run of the thread as a RunView (its question and the thread before it); null when it is not one of the user's runs of this thread. */
  async existing(user: AuthUser, threadId: string, runId: string, signal: AbortSignal): Promise<{ run: RunInfoRecord; view: RunView } | null> {
    for (;;) {
      const run = await this.runs.info(runId, user.userId);
      if (run) return run.session_id === threadId ? { run, view: await this.view(user, threadId, runId, run.message) } : null;
      // A queued run is waited for until it starts; one cancelled meanwhile, or whose instance died, is not found.
      const queued = await this.pending.find(runId, user.userId, this.runs.staleAfterMs);
      if (!queued || queued.lost || queued.session_id !== threadId || signal.aborted) return null;
      await sleep(QUEUE_POLL_MS, signal);
    }
  }

  /**
   * An ended run's events told from what it stored, once its own events have expired: its metadata, then its end
   * (the answer, a pause with its question, a cancel, or a failure whose details were not kept). Null for a run that
   * has not ended.
   */
  async storedEvents(view: RunView): Promise<RunEvent[] | null> {
    if (!view.threadId) return null;
    const run = await this.runs.info(view.runId, view.userId);
    if (!run || run.status === 'running') return null;
    const events: RunEvent[] = [runEvent(1, 'metadata', { run_id: run.run_id, session_id: run.session_id })];
    const messages = await view.finalMessages();
    const answer = messages.find((message) => message.id === answerMessageId(run.run_id));
    const thread = await this.threads.get(view.userId, view.threadId);
    const end = (data: Extract<RunEvent, { event: 'error' }>['data']) => events.push(runEvent(events.length + 1, 'error', data));
    if (run.status === 'done' || run.status === 'interrupted') {
      // A pause still waiting is this run's when its question is the thread's last message.
      const paused = run.status === 'interrupted' && thread?.pending_hitl && messages.at(-1)?.id === answerMessageId(run.run_id) ? thread.pending_hitl : null;
      if (paused) events.push(runEvent(events.length + 1, 'hitl', paused));
      events.push(runEvent(events.length + 1, 'done', { response: answer?.content ?? '', session_id: run.session_id }));
    } else if (run.status === 'cancelled') {
      end({ code: 'cancelled', message: 'The turn was cancelled.' });
    } else {
      end({ code: 'events_incomplete', message: 'The run ended without an answer; its events are no longer kept.' });
    }
    return events;
  }

  /** Cancels the user's run of the thread; `rollback` also removes what it kept. Null when there is no such run. */
  async cancel(user: AuthUser, threadId: string, runId: string, action: 'interrupt' | 'rollback'): Promise<LgRunRecord | null> {
    const run = await this.runs.info(runId, user.userId);
    if (!run) {
      // A queued run leaves the queue: it never starts.
      const queued = await this.pending.find(runId, user.userId, this.runs.staleAfterMs);
      if (!queued || queued.session_id !== threadId || !(await this.pending.remove(runId, user.userId))) return null;
      return { ...queuedRecord(queued), status: 'cancelled' };
    }
    if (run.session_id !== threadId) return null;
    const after = (await this.control.cancel(runId, user.userId)) ?? run;
    if (action === 'rollback' && after.status === 'cancelled') await this.threads.removeCancelledRun(user.userId, threadId, runId);
    return after;
  }

  /** The thread's runs, newest first. */
  async list(user: AuthUser, threadId: string, page: { limit: number; offset: number }): Promise<LgRunRecord[]> {
    const queued = (await this.pending.listForSession(threadId, user.userId, this.runs.staleAfterMs)).reverse().map(queuedRecord);
    const fromQueue = queued.slice(page.offset, page.offset + page.limit);
    const offset = Math.max(0, page.offset - queued.length);
    const started = await this.runs.listInSession(threadId, user.userId, { limit: page.limit - fromQueue.length, offset, status: null });
    return [...fromQueue, ...started];
  }

  /**
   * A thread-less run: a stateless turn over the input's conversation,
   * nothing stored; `events` receives its events as a thread's run has them
   * (metadata first, then done or error). `signal` stops it.
   */
  async stateless(user: AuthUser, request: LgRunRequest, write: (event: RunEvent, view: RunView) => Promise<void>, signal: AbortSignal): Promise<void> {
    if (request.message === null) throw new RequestError('invalid_request', "input.messages must end with the user's message");
    if (request.resume) throw new RequestError('nothing_to_resume', 'A thread-less run has no interrupt to resume: its pauses are not kept');
    const total = request.conversation.reduce((sum, message) => sum + message.text.length, 0);
    if (total > OPENAI_CONVERSATION_MAX_LENGTH) {
      throw new RequestError(
        'invalid_request',
        `input.messages: a thread-less run's conversation must be at most ${OPENAI_CONVERSATION_MAX_LENGTH} characters in all; run it on a thread to keep a longer one`,
      );
    }
    const scope = await this.scopes.forTurn(user, request.collectionIds);
    const runId = randomUUID();
    const conversation = request.conversation.map((message, i) => inputLcMessage(message, `${runId}-${i}`));
    let answer: LcMessage | null = null;
    const view: RunView = {
      runId,
      threadId: null,
      userId: user.userId,
      before: conversation.slice(0, -1),
      question: conversation.at(-1) ?? null,
      finalMessages: async () => [...conversation, ...(answer ? [answer] : [])],
    };
    let id = 0;
    let chain = write(runEvent((id += 1), 'metadata', { run_id: runId, session_id: runId }), view);
    const context = TurnContext.of({ userId: user.userId, sessionId: runId, runId }, 'stream', { scope, sampling: request.sampling });
    let paused = false;
    try {
      const result = await this.chat.runStateless(
        request.conversation.map(toBaseMessage),
        context,
        (...event) => {
          if (event[0] === 'hitl') paused = true;
          chain = chain.then(() => write(runEvent((id += 1), ...event), view));
        },
        signal,
      );
      await chain;
      if (result.pending_hitl && !paused) await write(runEvent((id += 1), 'hitl', result.pending_hitl), view);
      answer = answerMessage(runId, result.response, result.rag_trace);
      await write(runEvent((id += 1), 'done', { response: result.response, session_id: runId }), view);
    } catch (error) {
      await chain.catch(() => undefined);
      const failure = error instanceof CodedError ? error : new TurnFailedError('internal_error', 'The run failed on an internal error. Nothing was saved.', false);
      await write(runEvent((id += 1), 'error', { code: failure.code, message: failure.message }), view);
    }
  }

  /** Claims the thread for the run by its multitask strategy; null when the run is to be queued (enqueue, a busy thread). */
  private async take(user: AuthUser, threadId: string, message: string, strategy: MultitaskStrategy, signal: AbortSignal) {
    for (let attempt = 1; ; attempt += 1) {
      // A run queued before this one goes first.
      if (strategy === 'enqueue' && (await this.pending.listForSession(threadId, user.userId, this.runs.staleAfterMs)).some((run) => !run.lost)) return null;
      try {
        return await this.chat.prepare(user.userId, message, threadId);
      } catch (error) {
        if (!(error instanceof RunInProgressError) || strategy === 'reject' || attempt >= TAKE_ATTEMPTS || signal.aborted) throw error;
        if (strategy === 'enqueue') return null;
        const running = error.runId ?? (await this.runs.runningIn(threadId));
        if (running) await this.cancel(user, threadId, running, strategy);
      }
    }
  }

  /**
   * Starts a queued run once the thread is free and every run queued before it has started: it follows the thread's
   * running run to its end (on whichever instance it runs) and beats the queued run's heartbeat meanwhile. Rejects
   * when the run was cancelled while queued, or the instance shuts down.
   */
  private async startWhenFree(user: AuthUser, threadId: string, runId: string, message: string) {
    const signal = this.drain.signal;
    const beating = setInterval(() => void this.pending.beat(runId).catch(() => undefined), this.runs.heartbeatMs);
    beating.unref();
    try {
      for (;;) {
        if (signal.aborted || !(await this.pending.beat(runId))) throw new RequestError('run_not_found', `Run ${runId} was cancelled before it started`);
        const running = await this.runs.runningIn(threadId);
        if (running) {
          await this.waitForEnd(running, signal);
          continue;
        }
        if (!(await this.pending.isFirst(runId, threadId, this.runs.staleAfterMs))) {
          await sleep(QUEUE_POLL_MS, signal);
          continue;
        }
        try {
          const turn = await this.chat.prepare(user.userId, message, threadId, runId);
          await this.pending.remove(runId);
          return turn;
        } catch (error) {
          if (!(error instanceof RunInProgressError)) {
            await this.pending.remove(runId).catch(() => undefined);
            throw error;
          }
        }
      }
    } finally {
      clearInterval(beating);
    }
  }

  /** Resolves when the run has ended, on whichever instance it runs (its events' end), or when `signal` aborts. */
  private async waitForEnd(runId: string, signal: AbortSignal): Promise<void> {
    const events = await this.events.follow(runId, 0, { status: () => this.runs.status(runId), signal });
    for await (const event of events) if (event.event === 'done' || event.event === 'error') break;
  }

  /**
   * Where a run that names a checkpoint starts from. The thread's latest checkpoint (useStream sends it) is no fork:
   * null. An earlier one forks the thread, which keeps one line of messages: the messages after the checkpoint are
   * replaced by the run's. Without input (regenerate), the checkpoint must follow a question, which is asked again.
   */
  private async forkPoint(user: AuthUser, thread: SessionThread, request: LgRunRequest, checkpointId: string): Promise<{ keepSeq: number; question: string | null } | null> {
    const messages = (await this.reads.getSessionMessages(user.userId, thread.session_id)) ?? [];
    const seq = seqOfCheckpoint(checkpointId, messages);
    if (seq === null) throw new RequestError('checkpoint_not_found', `Checkpoint ${checkpointId.slice(0, 64)} not found in thread ${thread.session_id}`);
    if (seq === thread.message_count) return null;
    if (request.resume) throw new RequestError('not_supported', "command.resume answers the thread's latest state: send it without a checkpoint");
    if (request.message !== null) return { keepSeq: seq, question: null };
    const asked = messages.find((message) => message.seq === seq);
    if (asked?.type !== 'human') throw new RequestError('invalid_request', "A run without input starts again from a question: name the checkpoint after the user's message");
    return { keepSeq: seq - 1, question: asked.content };
  }

  /** The session metadata a fork makes stale: a paused question (always cut off by it), and a summary of messages it removes. */
  private async forkedMetadataKeys(user: AuthUser, threadId: string, keepSeq: number): Promise<string[]> {
    const metadata = (await this.reads.sessionMetadata(user.userId, threadId)) ?? {};
    const { upto } = ConversationSummaryService.read(metadata);
    return [PENDING_HITL_KEY, HITL_ROUNDS_KEY, ...(upto > keepSeq ? [SUMMARY_KEY, SUMMARY_UPTO_KEY] : [])];
  }

  /** The thread as the run sees it: the messages before it, its question, and (after its end) the thread as stored. */
  private async view(user: AuthUser, threadId: string, runId: string, question: string | null): Promise<RunView> {
    const read = async (): Promise<MessageInfo[]> => (await this.reads.getSessionMessages(user.userId, threadId)) ?? [];
    const stored = await read();
    const first = stored.findIndex((message) => message.run_id === runId);
    let final: Promise<LcMessage[]> | null = null;
    return {
      runId,
      threadId,
      userId: user.userId,
      before: (first >= 0 ? stored.slice(0, first) : stored).map((message) => toLcMessage(message)),
      question: question === null ? null : humanMessage(questionMessageId(runId), question),
      finalMessages: () =>
        (final ??= read().then((messages) => {
          const last = messages.findLastIndex((message) => message.run_id === runId);
          return (last >= 0 ? messages.slice(0, last + 1) : messages).map((message) => toLcMessage(message));
        })),
    };
  }
}

function queuedRecord(row: PendingRunRow): LgRunRecord {
  const at = new Date(row.created_at).toISOString();
  // A queued run whose instance died never starts.
  return { run_id: row.run_id, session_id: row.session_id, status: row.lost ? 'abandoned' : 'pending', started_at: at, finished_at: null, message: null };
}

function inputLcMessage(message: InputMessage, id: string): LcMessage {
  return { type: message.role, id, content: message.text, additional_kwargs: {}, response_metadata: {} };
}

function toBaseMessage(message: InputMessage): BaseMessage {
  if (message.role === 'ai') return new AIMessage(message.text);
  if (message.role === 'system') return new SystemMessage(message.text);
  return new HumanMessage(message.text);
}
