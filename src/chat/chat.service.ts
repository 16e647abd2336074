import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, GraphRecursionError, INTERRUPT } from '@langchain/langgraph';
import { AgentFactory, AgentGraph, MAX_TOOL_ROUNDS } from '../agent/agent.factory.js';
import { CheckpointerProvider } from '../agent/checkpointer.provider.js';
import { TurnContext } from '../agent/turn-context.js';
import { CodedError } from '../common/coded-error.js';
import { isDatabaseUnavailable } from '../common/database-unavailable.js';
import { withTimeout } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { CommitOutcomeUnknownError, isUnanswered, transactionKnowingCommit } from '../database/commit-outcome.js';
import { toLangChainMessages } from '../session/langchain-messages.js';
import type { NewMessage } from '../session/message.repository.js';
import { SessionReads } from '../session/session-reads.service.js';
import { titleFrom } from '../session/session-title.js';
import { AppendTurnOptions, AppendTurnResult, SessionWrites } from '../session/session-writes.service.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { normalizePendingHitl } from '../trace/trace.normalizer.js';
import type { HitlResumeState, PendingHitlState, RagTrace } from '../trace/trace.protocol.js';
import { RunInProgressError, RunNotRunningError, TurnFailedError, TurnFailureCode } from './chat.errors.js';
import { ConversationSummaryService } from './conversation-summary.service.js';
import { PendingRunEnds } from './pending-run-ends.js';
import { RunEventsService } from './run-events.service.js';
import { RunCancellation, RunCancelledSignal } from './run-cancellation.service.js';
import { RunInfoRecord, RunRegistry, RunSlotTakenError, RunStatus } from './run-registry.service.js';
import type { RunEventArgs } from './run-event.js';
import { type StepEvent, toolEndSummary, toolFailedSummary, toolStartSummary } from './sse-events.dto.js';

export interface TurnResult {
  response: string;
  rag_trace: RagTrace | null;
  session_id: string;
  pending_hitl: PendingHitlState | null;
  run_id: string;
}

export interface PreparedTurn {
  runId: string;
  sessionId: string;
  userId: string;
  message: string;
}

/** Where a turn's events go: the run's stream in Redis, or a caller's own sink (a stateless turn). */
export type Emit = (...event: RunEventArgs) => void;

/** What a graph run has produced so far, for a turn that stops before it ends. */
interface GraphProgress {
  /** What the model said so far. */
  answer: string;
  /** The trace the tools last wrote to the state. */
  trace: RagTrace | null;
}

/** How a graph run ended: its answer or the question it paused on, and the final state's trace and resume data. */
interface GraphOutcome {
  answer: string;
  interrupt?: Record<string, unknown>;
  trace: RagTrace | null;
  resumeState: HitlResumeState | null;
}

/** How often a cancel looks whether the run stopped. */
const CANCEL_POLL_MS = 25;

/** Session metadata keys of a paused (human-in-the-loop) task: what the session API shows; the run itself resumes from its graph state. */
export const PENDING_HITL_KEY = 'pending_hitl';
export const HITL_RESUME_KEY = 'hitl_resume_state';
export const HITL_ROUNDS_KEY = 'hitl_rounds';

function textContent(message: BaseMessage): string {
  const content = message.content;
  return typeof content === 'string' ? content : content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Why the turn failed, in words for the user (never a driver's or a library's text), before saying whether the message was kept. */
export function classifyFailure(error: unknown): { code: TurnFailureCode; reason: string } {
  if (error instanceof SessionNotFoundError) {
    return { code: 'session_deleted', reason: 'The session was deleted while the turn ran.' };
  }
  if (error instanceof RunNotRunningError && error.status === 'cancelled') return { code: 'cancelled', reason: 'The turn was cancelled.' };
  if (error instanceof RunNotRunningError && error.status === null) {
    return { code: 'session_deleted', reason: 'The session was deleted while the turn ran.' };
  }
  if (error instanceof RunNotRunningError) {
    return { code: 'run_lost', reason: 'This turn was given up as lost while it could not reach the database (its session may have moved on).' };
  }
  if (error instanceof TurnFailedError) return { code: error.code, reason: error.message };
  // Any other coded error (a model's, a tool's, storage's) ends the turn with its own code, status and words.
  if (error instanceof CodedError) return { code: error.code, reason: error.message };
  if (isDatabaseUnavailable(error)) {
    return { code: 'storage_unavailable', reason: 'The database did not answer in time.' };
  }
  if (error instanceof GraphRecursionError) {
    return { code: 'model_error', reason: 'The agent did not finish within its step limit.' };
  }
  return { code: 'internal_error', reason: 'The turn failed on an internal error.' };
}

/** A turn's own commit, once sent: what it stores and answers, and how its followers are told. */
interface CommitAttempt {
  result: TurnResult;
  tell: () => void;
  /** The thread whose checkpoints go once it landed (none for a paused task). */
  finishedThread: string | null;
}

/** What a failed turn tells the user of their message, after the reason. */
function toldAfterFailure(code: TurnFailureCode, saved: boolean | null): string {
  if (saved === null) {
    return 'Whether your message was saved is not known yet (the database did not answer while it was being saved): reload the session before sending it again.';
  }
  if (code === 'cancelled') return saved ? 'Your message was saved, marked cancelled.' : 'Nothing was saved.';
  if (saved) return 'Your message was saved; retry to get an answer.';
  return code === 'session_deleted' || code === 'run_lost' ? 'Nothing was saved.' : 'Your message was NOT saved; please send it again.';
}

/**
 * Chat turns: claim the session's run slot, give the agent a bounded view of
 * the conversation, run the LangGraph graph (streaming its events when asked),
 * commit the human and AI messages with the trace in one transaction, and
 * leave no checkpoint behind a finished run.
 */
@Injectable()
export class ChatService {
  private readonly logger = new Logger(ChatService.name);
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly pendingEnds: PendingRunEnds;

  constructor(
    private readonly storage: SessionReads,
    private readonly sessionWrites: SessionWrites,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly agents: AgentFactory,
    private readonly checkpointer: CheckpointerProvider,
    private readonly runs: RunRegistry,
    private readonly events: RunEventsService,
    private readonly summaries: ConversationSummaryService,
    private readonly cancellation: RunCancellation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.pendingEnds = new PendingRunEnds(runs, config.chat.runStaleAfterMs);
  }

  /**
   * Opens the session (creating it for a first turn, so it exists for its
   * owner only from now on) and claims its run slot; throws
   * SessionNotFoundError (another user's or deleted session) or RunInProgressError.
   */
  async prepare(userId: string, message: string, sessionId?: string): Promise<PreparedTurn> {
    const id = sessionId ?? randomUUID();
    const runId = randomUUID();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        // The session and its run slot commit together: a session a first turn creates exists with its run.
        await transactionKnowingCommit(this.dataSource, async (manager) => {
          await this.sessionWrites.open(manager, userId, id, titleFrom(message));
          await this.runs.claim(manager, runId, id, userId, message);
        });
        return { runId, sessionId: id, userId, message };
      } catch (error) {
        // The claim may have landed with nobody to run it: it is ended, so that it does not hold the session.
        if (error instanceof CommitOutcomeUnknownError) this.pendingEnds.record(id, { runId, status: 'error', error: 'its claim was not confirmed' });
        if (!(error instanceof RunSlotTakenError)) throw error;
        // A run of this instance that failed without its end recorded, or a run whose instance died (its heartbeat is
        // stale), stops blocking its session.
        if (!(await this.pendingEnds.settle(id)) && !(await this.runs.releaseStale(id))) {
          throw new RunInProgressError(id, await this.runs.runningIn(id).catch(() => null));
        }
      }
    }
    throw new RunInProgressError(id, await this.runs.runningIn(id).catch(() => null));
  }

  /** Runs a prepared turn to the end and answers it whole (POST /api/chat). */
  async runSync(turn: PreparedTurn, context: TurnContext): Promise<TurnResult> {
    return this.track(this.execute(turn, context, () => undefined));
  }

  /**
   * Starts a prepared turn in the background with its events published for
   * streaming (POST /api/chat/stream). The run does not depend on the caller's
   * connection: it finishes and commits even if nobody listens.
   */
  startStreaming(turn: PreparedTurn, context: TurnContext): void {
    this.events.open(turn.runId);
    const emit: Emit = (...event) => this.events.publish(turn.runId, ...event);
    void this.track(this.execute(turn, context, emit)).catch(() => undefined);
  }

  /**
   * A turn over the caller's own conversation (the OpenAI-compatible route
   * without a session): `messages` end with the user's message; no session,
   * no run slot, nothing stored, its checkpoints deleted however it ends. A
   * pause for the user answers its question, but cannot be resumed: only a
   * session turn keeps the paused task. `signal` aborts it (the client left).
   * Its checkpoints live in memory only while it runs (EphemeralSaver).
   */
  async runStateless(messages: BaseMessage[], context: TurnContext, emit: Emit, signal: AbortSignal): Promise<Omit<TurnResult, 'session_id'>> {
    const threadId = context.runId;
    const saver = this.agents.ephemeralSaver;
    saver.begin(threadId);
    return this.track(
      (async () => {
        try {
          const outcome = await this.runGraph(context, { messages }, emit, threadId, signal, { answer: '', trace: null }, this.agents.statelessGraph);
          const { trace } = outcome;
          context.close();
          if (outcome.interrupt) {
            const pending = normalizePendingHitl({ ...outcome.interrupt, task_id: threadId, user_supplement: null, created_at: new Date().toISOString() });
            const prompt = pending?.clarification_prompt ?? pending?.original_question ?? '';
            return { response: prompt, rag_trace: trace, pending_hitl: pending, run_id: context.runId };
          }
          return { response: outcome.answer, rag_trace: trace, pending_hitl: null, run_id: context.runId };
        } catch (error) {
          context.close();
          // Aborted by the client leaving, or with a coded reason (the instance shutting down).
          if (signal.aborted && signal.reason instanceof CodedError) throw new TurnFailedError(signal.reason.code, `${signal.reason.message} Nothing was saved.`, false);
          if (signal.aborted) throw new TurnFailedError('cancelled', 'The turn was cancelled. Nothing was saved.', false);
          const { code, reason } = classifyFailure(error);
          this.logger.warn({ err: error, run_id: context.runId }, `stateless turn failed: ${code}`);
          throw new TurnFailedError(code, `${/[.!?。！？]$/.test(reason) ? reason : `${reason}.`} Nothing was saved.`, false);
        } finally {
          await saver.end(threadId);
        }
      })(),
    );
  }

  /** Resolves when every turn started by this instance has finished (graceful shutdown, tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  private async execute(turn: PreparedTurn, context: TurnContext, emit: Emit): Promise<TurnResult> {
    const { runId, sessionId, userId, message } = turn;
    const cancelled = this.cancellation.register(runId);
    // Until the turn's outcome is being settled: a late heartbeat answer may revive the run only while it still works.
    let working = true;
    // A run no longer `running` in the database (cancelled while Redis could not carry the request, or given up) stops here too.
    const heartbeat = setInterval(
      () =>
        void this.runs
          .heartbeat(runId)
          .then((status) => {
            // Its heartbeats were late past RUN_STALE_AFTER_MS (a database stall, a long pause) and nobody gave it up
            // meanwhile: the run still works, so it says so. A heartbeat of a run that has failed since never does this.
            if (status === 'stale') return working ? this.runs.revive(runId) : undefined;
            // Cancelled through the database; or its session was deleted, or it was given up: the work stops either way.
            if (status === 'cancelled') this.cancellation.abortLocal(runId);
            else if (status === null) this.cancellation.abortLocal(runId, new SessionNotFoundError(sessionId));
            else if (status !== 'running') this.cancellation.abortLocal(runId, new RunNotRunningError(runId, status));
          })
          .catch(() => undefined),
      this.runs.heartbeatMs,
    );
    heartbeat.unref();
    // What the model said before the turn stopped: kept with a cancelled turn.
    const progress: GraphProgress = { answer: '', trace: null };
    emit('metadata', { run_id: runId, session_id: sessionId });
    let threadId = runId;
    // What the turn's own commit stores and tells, once it is sent: a commit whose answer was lost may have landed.
    let attempt: CommitAttempt | null = null;
    // Set once the commit landed: nothing after it may fail the turn or store it again.
    let committed: TurnResult | null = null;
    try {
      const history = await this.storage.getTurnContext(userId, sessionId, this.config.chat.recentMessages);
      const metadata = history?.metadata ?? {};
      const { summary, upto } = ConversationSummaryService.read(metadata);
      // A message to a session with a paused task is the user's supplement for it.
      const recorded = normalizePendingHitl(metadata[PENDING_HITL_KEY]);
      // A task whose checkpoint is gone cannot be resumed: the message is then an ordinary turn.
      const paused = recorded?.task_id && (await this.isWaiting(recorded.task_id)) ? recorded : null;
      if (recorded && !paused) this.logger.warn(`paused task ${recorded.task_id} has no checkpoint; treating the message as a new turn`);
      const rounds = Number.isInteger(metadata[HITL_ROUNDS_KEY]) ? (metadata[HITL_ROUNDS_KEY] as number) : 1;
      threadId = paused?.task_id ?? runId;

      let input: { messages: BaseMessage[] } | Command;
      if (paused) {
        input = new Command({ resume: message });
      } else {
        // The window, less whatever the summary already covers.
        const unsummarized = history ? history.messageCount - upto : 0;
        const recent = unsummarized > 0 ? history!.recent.slice(-unsummarized) : [];
        input = { messages: [...toLangChainMessages(recent), new HumanMessage(message)] };
      }

      context.summary = summary;
      const outcome = await this.runGraph(context, input, emit, threadId, cancelled, progress);
      const { trace, resumeState } = outcome;
      context.close();

      if (outcome.interrupt) {
        const pending = normalizePendingHitl({
          ...outcome.interrupt,
          task_id: threadId,
          user_supplement: paused ? message : null,
          created_at: new Date().toISOString(),
        });
        if (!pending) throw new Error('the knowledge tool paused with an invalid HITL payload');
        const prompt: string = pending.clarification_prompt ?? pending.original_question ?? '';
        attempt = {
          result: { response: prompt, rag_trace: trace, session_id: sessionId, pending_hitl: pending, run_id: runId },
          tell: () => {
            emit('hitl', pending);
            if (trace) emit('trace', trace);
            emit('done', { response: prompt, session_id: sessionId });
          },
          // The paused task's checkpoints stay: its question waits for an answer.
          finishedThread: null,
        };
        await this.commitTurn(
          turn,
          [
            { type: 'human', content: message, run_id: runId },
            { type: 'ai', content: prompt, rag_trace: trace, run_id: runId },
          ],
          { status: 'interrupted' },
          { metadata: { [PENDING_HITL_KEY]: pending, [HITL_RESUME_KEY]: resumeState, [HITL_ROUNDS_KEY]: paused ? rounds + 1 : 1 } },
        );
        committed = attempt.result;
        this.announce(runId, attempt.tell);
        return committed;
      }

      const response = outcome.answer;
      attempt = {
        result: { response, rag_trace: trace, session_id: sessionId, pending_hitl: null, run_id: runId },
        tell: () => {
          if (trace) emit('trace', trace);
          emit('done', { response, session_id: sessionId });
        },
        finishedThread: threadId,
      };
      const stored = await this.commitTurn(
        turn,
        [
          { type: 'human', content: message, run_id: runId },
          { type: 'ai', content: response, rag_trace: trace, run_id: runId },
        ],
        { status: 'done' },
        recorded ? { metadata: { [PENDING_HITL_KEY]: null, [HITL_RESUME_KEY]: null, [HITL_ROUNDS_KEY]: null } } : {},
      );
      committed = attempt.result;
      this.announce(runId, attempt.tell);
      await this.forgetCheckpoints(threadId);
      // Off the answer's path; drain() waits for it at shutdown.
      void this.track(this.summaries.maybeFold(userId, sessionId, stored.message_count));
      return committed;
    } catch (error) {
      working = false;
      context.close();
      if (cancelled.reason instanceof RunCancelledSignal && !committed) return await this.commitCancelled(turn, progress.answer, progress.trace, emit);
      if (committed) {
        // The turn is stored and its run finished: a failure after that (telling followers, cleaning up) is logged, not reported.
        this.logger.error({ err: error, run_id: runId, session_id: sessionId }, 'failure after the turn committed');
        return committed;
      }
      // A run stopped because its session went away or it was given up fails for that reason, not for the abort it caused.
      const cause = cancelled.aborted && cancelled.reason instanceof Error ? cancelled.reason : error;
      const outcome = await this.settleFailure(turn, cause, error, attempt !== null);
      if (outcome === 'landed') {
        // The turn's own commit (settleFailure answers `landed` only once one was sent) landed; only its answer was
        // lost on the way back: the turn stands as stored.
        this.logger.warn({ err: error, run_id: runId, session_id: sessionId }, 'the turn committed although its commit was not confirmed');
        committed = attempt!.result;
        this.announce(runId, attempt!.tell);
        if (attempt!.finishedThread) void this.track(this.forgetCheckpoints(attempt!.finishedThread));
        return committed;
      }
      const { code, reason, saved } = outcome;
      this.logger.warn({ err: error, run_id: runId, session_id: sessionId }, `turn failed: ${code}`);
      const failure = new TurnFailedError(code, `${/[.!?。！？]$/.test(reason) ? reason : `${reason}.`} ${toldAfterFailure(code, saved)}`, saved);
      emit('error', { code: failure.code, message: failure.message, message_saved: saved });
      // Off the answer's path (a stalled database would hold it for another limit). A paused task's thread (another
      // run's id) is kept so the user can answer again, unless its session is gone.
      void this.track(this.forgetCheckpoints(runId));
      if (code === 'session_deleted' && threadId !== runId) void this.track(this.forgetCheckpoints(threadId));
      throw failure;
    } finally {
      clearInterval(heartbeat);
      this.cancellation.release(runId);
    }
  }

  /**
   * What a failed turn leaves stored, found out before the client is told:
   * `landed` when the turn's own commit landed after all (its answer was
   * lost on the way back); else the code to report and whether the user's
   * message is kept (null: not known yet). The message is kept when it can
   * be, marked failed, with the run's end in the same transaction; when the
   * run cannot be ended now, its end is recorded later (PendingRunEnds).
   */
  private async settleFailure(
    turn: PreparedTurn,
    cause: unknown,
    error: unknown,
    commitSent: boolean,
  ): Promise<'landed' | { code: TurnFailureCode; reason: string; saved: boolean | null }> {
    const { runId, sessionId, message } = turn;
    // How the run's record said it ended, when the turn stopped on reading it (a heartbeat, its own commit).
    const recorded = [cause, error].find((e): e is RunNotRunningError => e instanceof RunNotRunningError)?.status;
    if (commitSent && (recorded === 'done' || recorded === 'interrupted')) return 'landed';
    // Cancelled from another instance that could not reach this one: the cancel ended the run and kept the message.
    if (recorded === 'cancelled') return { ...classifyFailure(new RunNotRunningError(runId, recorded)), saved: true };
    const { code, reason } = classifyFailure(cause);
    if (code === 'session_deleted' || code === 'run_lost') return { code, reason, saved: false };
    const commitUnknown = error instanceof CommitOutcomeUnknownError;
    // A turn the instance's shutdown cut off is `interrupted` (its error text says why; no question waits for the user).
    const endedAs = code === 'shutting_down' ? 'interrupted' : 'error';
    const endLater = () => this.pendingEnds.record(sessionId, { runId, status: endedAs, error: reason });
    if (!commitUnknown && isUnanswered(cause)) {
      // The database stopped answering (no reply, or no connection in time) before anything of the turn was sent to
      // commit: nothing is stored, and trying to store the message would only wait for another limit while it lasts.
      endLater();
      return { code, reason, saved: false };
    }
    // After a COMMIT without an answer, keeping the message also reads back what landed: the turn's transaction holds
    // its rows until it ends, and a run it ended reads `done`. That read-back waits at most the lock limit.
    const keeping = this.commitTurn(turn, [{ type: 'human', content: message, run_id: runId, status: 'failed' }], { status: endedAs, error: reason });
    try {
      await (commitUnknown ? withTimeout(keeping, this.config.database.lockTimeoutMs, () => new Error('the read-back of the turn did not finish in time')) : keeping);
      return { code, reason, saved: true };
    } catch (saveError) {
      const ended = saveError instanceof RunNotRunningError ? saveError.status : undefined;
      if (commitSent && (ended === 'done' || ended === 'interrupted')) return 'landed';
      if (ended === 'cancelled') return { ...classifyFailure(saveError), saved: true };
      if (saveError instanceof SessionNotFoundError || saveError instanceof RunNotRunningError) return { ...classifyFailure(saveError), saved: false };
      this.logger.error({ err: saveError, run_id: runId }, 'could not keep the human message');
      endLater();
      // A commit without an answer (the turn's or the keeping's), or a read-back cut short, may still land.
      const unknown = commitUnknown || saveError instanceof CommitOutcomeUnknownError;
      return { code, reason, saved: unknown ? null : false };
    }
  }

  /**
   * Ends a cancelled turn: the human message and whatever the model had said
   * are kept, marked `cancelled`, with the run's end in the same transaction,
   * so the session is free the moment the cancel returns.
   */
  private async commitCancelled(turn: PreparedTurn, answerSoFar: string, trace: RagTrace | null, emit: Emit): Promise<never> {
    let partial = answerSoFar;
    const { runId, sessionId, message } = turn;
    let saved: boolean | null = true;
    try {
      await this.commitTurn(
        turn,
        [
          { type: 'human', content: message, run_id: runId, status: 'cancelled' },
          ...(partial ? [{ type: 'ai' as const, content: partial, rag_trace: trace, run_id: runId, status: 'cancelled' as const }] : []),
        ],
        { status: 'cancelled', error: 'cancelled by the user' },
      );
    } catch (error) {
      if (error instanceof RunNotRunningError && error.status === 'cancelled') {
        // The cancel could not reach this instance in time and ended the run itself, keeping the message (not the answer so far).
        partial = '';
      } else {
        this.logger.warn({ err: error, run_id: runId }, 'a cancelled turn could not be kept');
        saved = error instanceof SessionNotFoundError || error instanceof RunNotRunningError ? false : null;
        if (saved === null) this.pendingEnds.record(sessionId, { runId, status: 'cancelled', error: 'cancelled by the user' });
      }
    }
    const told = saved
      ? `Your message${partial ? ' and the answer so far were' : ' was'} saved, marked cancelled.`
      : saved === false
        ? 'Nothing was saved.'
        : 'Whether your message was saved is not known yet: reload the session.';
    const failure = new TurnFailedError('cancelled', `The turn was cancelled. ${told}`, saved);
    emit('error', { code: failure.code, message: failure.message, message_saved: saved });
    // A paused task's thread (another run's id) is kept: its question still waits for an answer, as after a failure.
    await this.forgetCheckpoints(runId);
    throw failure;
  }

  /**
   * Cancels the user's run (POST /api/chat/runs/:run_id/cancel): asks the
   * instance running it to stop, waits up to RUN_CANCEL_WAIT_MS for it to,
   * and ends it itself when it did not. Answers the run as it then stands;
   * null when it is not the user's.
   */
  async cancel(runId: string, userId: string): Promise<RunInfoRecord | null> {
    const run = await this.runs.info(runId, userId);
    if (!run || run.status !== 'running') return run;
    await this.cancellation.request(runId);
    const deadline = Date.now() + this.config.chat.runCancelWaitMs;
    while (Date.now() < deadline && (await this.runs.status(runId)) === 'running') {
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
    }
    // The running instance did not stop it in time (it may be cut off from Redis): the cancel records it and keeps its
    // message itself, and that instance stops at its next heartbeat without committing.
    if ((await this.runs.status(runId)) === 'running') await this.forceCancel(runId, userId, run.session_id);
    return (await this.runs.info(runId, userId)) ?? run;
  }

  /**
   * Ends a run the cancel could not stop through its instance (Redis could
   * not carry the request, or that instance did not answer in time): the run
   * is recorded cancelled and the message that started it kept, marked
   * cancelled, in one transaction. False when the run had ended meanwhile.
   */
  private async forceCancel(runId: string, userId: string, sessionId: string): Promise<boolean> {
    const message = await this.runs.message(runId);
    try {
      await this.commitTurn({ runId, userId, sessionId }, message ? [{ type: 'human', content: message, run_id: runId, status: 'cancelled' }] : [], {
        status: 'cancelled',
        error: 'cancelled by the user',
      });
      return true;
    } catch (error) {
      if (error instanceof RunNotRunningError || error instanceof SessionNotFoundError) return false;
      throw error;
    }
  }

  /**
   * Commits a turn's messages (in its session, which must still exist) and its run's end in one transaction: the
   * run's end commits with the turn, so a client posting right after `done` finds the session free, and a run given
   * up as abandoned or cancelled meanwhile cannot commit at all (RunNotRunningError). A COMMIT without an answer
   * throws CommitOutcomeUnknownError: the caller finds out what landed.
   */
  private async commitTurn(
    turn: Pick<PreparedTurn, 'runId' | 'sessionId' | 'userId'>,
    messages: NewMessage[],
    end: { status: Exclude<RunStatus, 'running'>; error?: string },
    options: Omit<AppendTurnOptions, 'createIfMissing'> = {},
  ): Promise<AppendTurnResult> {
    const { runId, sessionId, userId } = turn;
    const stored = await transactionKnowingCommit(this.dataSource, async (manager) => {
      const appended = await this.sessionWrites.appendTurn(manager, userId, sessionId, messages, { ...options, createIfMissing: false });
      await this.runs.finish(runId, end.status, end.error, manager);
      return appended;
    });
    await this.sessionWrites.turnCommitted(userId, sessionId);
    return stored;
  }

  private async runGraph(
    context: TurnContext,
    input: { messages: BaseMessage[] } | Command,
    emit: Emit,
    threadId: string,
    signal: AbortSignal,
    progress: GraphProgress,
    graph: AgentGraph = this.agents.graph,
  ): Promise<GraphOutcome> {
    const stream = await graph.stream(input as { messages: BaseMessage[] }, {
      configurable: { thread_id: threadId },
      context: { turn: context },
      signal,
      // Sync turns need only node updates, so the model is called without streaming.
      streamMode: context.mode === 'stream' ? ['messages', 'custom', 'updates'] : ['updates'],
      recursionLimit: MAX_TOOL_ROUNDS * 2 + 2,
    });
    let finalAnswer: string | undefined;
    let streamedTokens = '';
    let paused: Record<string, unknown> | undefined;
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === 'messages') {
        const [messageChunk, metadata] = chunk as [BaseMessage, { langgraph_node?: string }];
        if (metadata?.langgraph_node === 'agent' && messageChunk instanceof AIMessageChunk) {
          const text = textContent(messageChunk);
          if (text) {
            streamedTokens += text;
            progress.answer = streamedTokens;
            emit('token', { text });
          }
        }
      } else if (mode === 'custom') {
        const { type, ...step } = chunk as { type?: string } & StepEvent; // what TurnContext.stepReporter writes
        if (type === 'step') emit('step', step);
      } else if (mode === 'updates') {
        const update = chunk as Record<string, { messages?: BaseMessage[]; ragTrace?: RagTrace | null } | undefined> & {
          __interrupt__?: Array<{ value?: Record<string, unknown> }>;
        };
        if (update.__interrupt__?.length) paused = update.__interrupt__[0].value ?? {};
        // What a cancelled turn keeps of its trace: the final state is not read then.
        if (update.tools?.ragTrace !== undefined) progress.trace = update.tools.ragTrace;
        for (const message of update.agent?.messages ?? []) {
          if (!(message instanceof AIMessage)) continue;
          if (message.tool_calls?.length) {
            for (const call of message.tool_calls) {
              emit('tool', { name: call.name, phase: 'start', summary: toolStartSummary(call.args) });
            }
          } else {
            finalAnswer = textContent(message);
          }
        }
        for (const message of update.tools?.messages ?? []) {
          if (message instanceof ToolMessage) {
            // A failed call's text is for the model (and may be internal); the client is told that it failed.
            const summary = message.status === 'error' ? toolFailedSummary() : toolEndSummary(textContent(message));
            emit('tool', { name: message.name ?? '', phase: 'end', summary });
          }
        }
      }
    }
    // The trace and a paused search's resume data are graph state channels (AgentState), kept by the checkpointer.
    const { values } = await graph.getState({ configurable: { thread_id: threadId } });
    return { answer: finalAnswer ?? streamedTokens, interrupt: paused, trace: values.ragTrace ?? null, resumeState: values.hitl?.resumeState ?? null };
  }

  /** Tells the run's followers how a committed turn ended; the turn stands whatever happens to the telling. */
  private announce(runId: string, tell: () => void): void {
    try {
      tell();
    } catch (error) {
      this.logger.error({ err: error, run_id: runId }, 'could not publish the end of a committed turn');
    }
  }

  /** Whether the thread's last checkpoint holds an interrupt waiting for an answer: one read of the saver. */
  private async isWaiting(threadId: string): Promise<boolean> {
    const tuple = await this.checkpointer.saver.getTuple({ configurable: { thread_id: threadId } });
    return tuple?.pendingWrites?.some(([, channel]) => channel === INTERRUPT) ?? false;
  }

  private async forgetCheckpoints(runId: string): Promise<void> {
    await this.checkpointer.forget(runId).catch((error: Error) => this.logger.warn(`checkpoints of ${runId} not deleted: ${error.message}`));
  }
}
