import { Inject, Injectable, Logger } from '@nestjs/common';
import { BaseMessage, HumanMessage } from '@langchain/core/messages';
import { Command, INTERRUPT } from '@langchain/langgraph';
import { AGENT_NAME, AgentFactory, AgentGraph, MAX_TOOL_ROUNDS } from '../agent/agent.factory.js';
import { CheckpointerProvider } from '../agent/checkpointer.provider.js';
import { TurnContext } from '../agent/turn-context.js';
import { CodedError } from '../common/coded-error.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { toLangChainMessages } from '../session/langchain-messages.js';
import { SessionReads } from '../session/session-reads.service.js';
import { Metrics, TurnMeter } from '../observability/metrics.js';
import { traceAgentTurn } from '../observability/spans.js';
import { currentTraceId } from '../observability/trace-context.js';
import { normalizePendingHitl } from '../trace/trace.normalizer.js';
import { TurnFailedError } from './chat.errors.js';
import { ConversationSummaryService } from './conversation-summary.service.js';
import { Emit, GraphEventTranslator, GraphStreamChunk } from './graph-events.js';
import { RunCancelledSignal } from './run-cancellation.service.js';
import { RunControl, WatchedRun } from './run-control.service.js';
import { RunEventsService } from './run-events.service.js';
import { RunRegistry } from './run-registry.service.js';
import { RunSlots } from './run-slots.service.js';
import { TurnCommits } from './turn-commits.service.js';
import { failureMessage, statelessFailure, toldAfterFailure } from './turn-failure.js';
import { TurnSettlement } from './turn-settlement.service.js';
import {
  answeredAttempt,
  CommitAttempt,
  GraphOutcome,
  HITL_ROUNDS_KEY,
  PENDING_HITL_KEY,
  pausedAttempt,
  pendingHitlOf,
  PreparedTurn,
  promptOf,
  TurnResult,
  TurnStart,
} from './turn-outcome.js';

export type { Emit } from './graph-events.js';
export { HITL_RESUME_KEY, HITL_ROUNDS_KEY, PENDING_HITL_KEY } from './turn-outcome.js';
export type { PreparedTurn, TurnResult } from './turn-outcome.js';

/** How a session's turn stands while it runs: its thread, and its own commit once sent (a commit whose answer was lost may have landed). */
interface TurnProgress {
  threadId: string;
  attempt: CommitAttempt | null;
  /** Set once the commit landed: nothing after it may fail the turn or store it again. */
  committed: TurnResult | null;
}

/**
 * Chat turns: claim the session's run slot (RunSlots), give the agent a bounded view of
 * the conversation, run the LangGraph graph (its chunks become the run's
 * events, GraphEventTranslator), commit the human and AI messages with the
 * trace in one transaction (TurnCommits), keep what a failed or cancelled
 * turn leaves (TurnSettlement), and leave no checkpoint behind a finished run.
 * Cancels are RunControl's.
 */
@Injectable()
export class ChatService {
  private readonly logger = new Logger(ChatService.name);
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly storage: SessionReads,
    private readonly agents: AgentFactory,
    private readonly checkpointer: CheckpointerProvider,
    private readonly runs: RunRegistry,
    private readonly slots: RunSlots,
    private readonly events: RunEventsService,
    private readonly summaries: ConversationSummaryService,
    private readonly control: RunControl,
    private readonly commits: TurnCommits,
    private readonly settlement: TurnSettlement,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /**
   * Opens the session and claims its run slot (RunSlots.claim); throws
   * SessionNotFoundError (another user's or deleted session) or RunInProgressError.
   * `runId` names the run when the caller announced it already.
   */
  prepare(userId: string, message: string, sessionId?: string, runId?: string): Promise<PreparedTurn> {
    return this.slots.claim(userId, message, sessionId, runId);
  }

  /** Runs a prepared turn to the end and answers it whole (POST /api/chat). */
  async runSync(turn: PreparedTurn, context: TurnContext): Promise<TurnResult> {
    const meter = this.metrics.startTurn();
    return this.track(
      this.metered(
        meter,
        this.traced(turn, () =>
          this.execute(
            turn,
            context,
            meteredEmit(meter, () => undefined),
          ),
        ),
      ),
    );
  }

  /**
   * Starts a prepared turn in the background with its events published for
   * streaming (POST /api/chat/stream). The run does not depend on the caller's
   * connection: it finishes and commits even if nobody listens.
   */
  startStreaming(turn: PreparedTurn, context: TurnContext): void {
    this.events.open(turn.runId);
    const meter = this.metrics.startTurn();
    const emit: Emit = meteredEmit(meter, (...event) => this.events.publish(turn.runId, ...event));
    // Started in the request's trace context: the turn's spans nest under the request's, however long it outlives it.
    void this.track(
      this.metered(
        meter,
        this.traced(turn, () => this.execute(turn, context, emit)),
      ),
    ).catch(() => undefined);
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
    const meter = this.metrics.startTurn();
    const events = new GraphEventTranslator(meteredEmit(meter, emit));
    return this.track(
      this.metered(
        meter,
        traceAgentTurn({ agentName: AGENT_NAME, runId: context.runId }, async () => {
          try {
            const outcome = await this.runGraph(context, { messages }, threadId, signal, events, this.agents.statelessGraph);
            const { trace } = outcome;
            context.close();
            if (outcome.interrupt) {
              const pending = pendingHitlOf(outcome.interrupt, threadId, null);
              return { response: promptOf(pending), rag_trace: trace, pending_hitl: pending, run_id: context.runId };
            }
            return { response: outcome.answer, rag_trace: trace, pending_hitl: null, run_id: context.runId };
          } catch (error) {
            context.close();
            // Aborted by the client leaving, or with a coded reason (the instance shutting down).
            const failure = statelessFailure(error, signal);
            if (!signal.aborted) this.logger.warn({ err: error, run_id: context.runId }, `stateless turn failed: ${failure.code}`);
            throw failure;
          } finally {
            await saver.end(threadId);
          }
        }),
      ),
    );
  }

  /** Resolves when every turn started by this instance has finished (graceful shutdown, tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** A session turn's span (`invoke_agent`), the session its conversation. */
  private traced<T>(turn: PreparedTurn, work: () => Promise<T>): Promise<T> {
    return traceAgentTurn({ agentName: AGENT_NAME, conversationId: turn.sessionId, runId: turn.runId }, work);
  }

  /** Counts the turn's end in the metrics by its outcome: answered, paused for the user, cancelled, or failed with its code. */
  private metered<T extends { pending_hitl: unknown }>(meter: TurnMeter, promise: Promise<T>): Promise<T> {
    promise.then(
      (result) => meter.end(result.pending_hitl ? 'paused' : 'success'),
      (error: unknown) => {
        const code = error instanceof CodedError ? error.code : 'internal_error';
        meter.end(code === 'cancelled' ? 'cancelled' : 'failed', code);
      },
    );
    return promise;
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise)).catch(() => undefined);
    return promise;
  }

  private async execute(turn: PreparedTurn, context: TurnContext, emit: Emit): Promise<TurnResult> {
    const run = this.control.watch(turn.runId, turn.sessionId);
    // What the model said before the turn stopped: kept with a cancelled turn.
    const graphEvents = new GraphEventTranslator(emit);
    const traceId = currentTraceId();
    emit('metadata', { run_id: turn.runId, session_id: turn.sessionId, ...(traceId ? { trace_id: traceId } : {}) });
    const progress: TurnProgress = { threadId: turn.runId, attempt: null, committed: null };
    try {
      const { start, input, summary } = await this.startTurn(turn);
      progress.threadId = start.threadId;
      context.summary = summary;
      const outcome = await this.runGraph(context, input, start.threadId, run.signal, graphEvents);
      context.close();
      const attempt = outcome.interrupt ? pausedAttempt(start, { ...outcome, interrupt: outcome.interrupt }, emit) : answeredAttempt(start, outcome, emit);
      progress.attempt = attempt;
      const stored = await this.commits.commit(turn, attempt.messages, attempt.end, attempt.options);
      progress.committed = attempt.result;
      this.announce(turn.runId, attempt.tell);
      // An answered turn's thread goes and its session may be summarized; a paused task keeps its thread.
      if (attempt.finishedThread) {
        await this.forgetCheckpoints(attempt.finishedThread);
        // Off the answer's path; drain() waits for it at shutdown.
        void this.track(this.summaries.maybeFold(turn.userId, turn.sessionId, stored.message_count));
      }
      return attempt.result;
    } catch (error) {
      run.settling();
      context.close();
      return await this.afterFailure(turn, run, error, progress, graphEvents, emit);
    } finally {
      run.stop();
    }
  }

  /**
   * What the turn starts from: the session's recent window (less what its summary covers) and the message, or, when
   * the session has a paused task whose checkpoint is still there, the message as the answer that resumes it.
   */
  private async startTurn(turn: PreparedTurn): Promise<{ start: TurnStart; input: { messages: BaseMessage[] } | Command; summary?: string }> {
    const { runId, userId, sessionId, message } = turn;
    const history = await this.storage.getTurnContext(userId, sessionId, this.config.chat.recentMessages);
    const metadata = history?.metadata ?? {};
    const { summary, upto } = ConversationSummaryService.read(metadata);
    // A message to a session with a paused task is the user's supplement for it.
    const recorded = normalizePendingHitl(metadata[PENDING_HITL_KEY]);
    // A task whose checkpoint is gone cannot be resumed: the message is then an ordinary turn.
    const paused = recorded?.task_id && (await this.isWaiting(recorded.task_id)) ? recorded : null;
    if (recorded && !paused) this.logger.warn(`paused task ${recorded.task_id} has no checkpoint; treating the message as a new turn`);
    const rounds = Number.isInteger(metadata[HITL_ROUNDS_KEY]) ? (metadata[HITL_ROUNDS_KEY] as number) : 1;
    const start: TurnStart = { turn, threadId: paused?.task_id ?? runId, resumed: Boolean(paused), rounds, hadPending: Boolean(recorded) };
    if (paused) return { start, input: new Command({ resume: message }), summary };
    // The window, less whatever the summary already covers.
    const unsummarized = history ? history.messageCount - upto : 0;
    const recent = unsummarized > 0 ? history!.recent.slice(-unsummarized) : [];
    return { start, input: { messages: [...toLangChainMessages(recent), new HumanMessage(message)] }, summary };
  }

  /** Ends a turn that threw: committed already, cancelled, its commit landed after all, or failed. */
  private async afterFailure(turn: PreparedTurn, run: WatchedRun, error: unknown, progress: TurnProgress, graphEvents: GraphEventTranslator, emit: Emit): Promise<TurnResult> {
    const { runId, sessionId } = turn;
    const { attempt, committed } = progress;
    if (run.signal.reason instanceof RunCancelledSignal && !committed) return await this.commitCancelled(turn, graphEvents.answerSoFar, graphEvents.trace, emit);
    if (committed) {
      // The turn is stored and its run finished: a failure after that (telling followers, cleaning up) is logged, not reported.
      this.logger.error({ err: error, run_id: runId, session_id: sessionId }, 'failure after the turn committed');
      return committed;
    }
    // A run stopped because its session went away or it was given up fails for that reason, not for the abort it caused.
    const cause = run.signal.aborted && run.signal.reason instanceof Error ? run.signal.reason : error;
    const verdict = await this.settlement.failed(turn, cause, error, attempt !== null);
    if (verdict === 'landed') {
      // The turn's own commit (TurnSettlement.failed answers `landed` only once one was sent) landed; only its answer was
      // lost on the way back: the turn stands as stored.
      this.logger.warn({ err: error, run_id: runId, session_id: sessionId }, 'the turn committed although its commit was not confirmed');
      this.announce(runId, attempt!.tell);
      if (attempt!.finishedThread) void this.track(this.forgetCheckpoints(attempt!.finishedThread));
      return attempt!.result;
    }
    const { code, reason, saved } = verdict;
    // A session its user deleted while its turn ran is no fault of the service: no warning, no stack trace.
    if (code === 'session_deleted') this.logger.log({ run_id: runId, session_id: sessionId }, 'turn ended: its session was deleted while it ran');
    else this.logger.warn({ err: error, run_id: runId, session_id: sessionId }, `turn failed: ${code}`);
    const failure = new TurnFailedError(code, failureMessage(reason, toldAfterFailure(code, saved)), saved);
    emit('error', { code: failure.code, message: failure.message, message_saved: saved });
    // Off the answer's path (a stalled database would hold it for another limit). A paused task's thread (another
    // run's id) is kept so the user can answer again, unless its session is gone.
    void this.track(this.forgetCheckpoints(runId));
    if (code === 'session_deleted' && progress.threadId !== runId) void this.track(this.forgetCheckpoints(progress.threadId));
    throw failure;
  }

  /** Ends a cancelled turn: what it keeps is TurnSettlement's; its followers are told, and its thread goes. */
  private async commitCancelled(turn: PreparedTurn, answerSoFar: string, trace: GraphOutcome['trace'], emit: Emit): Promise<never> {
    const failure = await this.settlement.cancelled(turn, answerSoFar, trace);
    emit('error', { code: failure.code, message: failure.message, message_saved: failure.messageSaved });
    // A paused task's thread (another run's id) is kept: its question still waits for an answer, as after a failure.
    await this.forgetCheckpoints(turn.runId);
    throw failure;
  }

  /** Runs the graph on the thread, its chunks translated into the run's events; reads the final state once it ends. */
  private async runGraph(
    context: TurnContext,
    input: { messages: BaseMessage[] } | Command,
    threadId: string,
    signal: AbortSignal,
    graphEvents: GraphEventTranslator,
    graph: AgentGraph = this.agents.graph,
  ): Promise<GraphOutcome> {
    const stream = await graph.stream(input as { messages: BaseMessage[] }, {
      configurable: { thread_id: threadId },
      context: { turn: context },
      signal,
      // Sync turns need only node updates, so the model is called without streaming.
      streamMode: context.mode === 'stream' ? ['messages', 'custom', 'updates', 'values'] : ['updates', 'values'],
      recursionLimit: MAX_TOOL_ROUNDS * 2 + 2,
    });
    for await (const chunk of stream as AsyncIterable<GraphStreamChunk>) graphEvents.handle(chunk);
    // The trace and a paused search's resume data are graph state channels (AgentState), kept by the checkpointer:
    // the state after the last step is what was checkpointed; it is read back only when no step completed.
    const values = graphEvents.finalValues ?? (await graph.getState({ configurable: { thread_id: threadId } })).values;
    return {
      answer: graphEvents.answer,
      interrupt: graphEvents.interrupt,
      trace: values.ragTrace ?? null,
      resumeState: values.hitl?.resumeState ?? null,
      tools: graphEvents.toolsUsed,
    };
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

/** `emit`, telling `meter` of each event first (the first token is the turn's time to first token). */
function meteredEmit(meter: TurnMeter, emit: Emit): Emit {
  return (...event) => {
    meter.sawEvent(event[0]);
    emit(...event);
  };
}
