import { CodedError, ErrorCode } from '../common/coded-error.js';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import pRetry from 'p-retry';
import { closeRedisClient, createRedisClient, RedisClient } from '../common/redis-client.js';
import { withTimeout, withTimeoutAfterPendingIo } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { RunStatus } from './run-registry.service.js';
import { RunEventTail, TailFollower } from './run-event-tail.js';
import { parseRunEvent, RunEvent, RunEventArgs, RunEventType, TERMINAL_EVENTS, trustedRunEvent } from './run-event.js';
import { RunEventStream } from './run-event-stream.js';

type Listener = (event: RunEvent) => void;

/** The run's current status, from the runs table (null: the run is gone with its session). */
export type RunStatusProbe = () => Promise<RunStatus | null>;

/** How a client follows a run: see RunEventsService.follow. */
export interface FollowOptions {
  /** The run's status, asked when the run is followed from Redis (to tell a lost run). */
  status: RunStatusProbe;
  /** Aborted when the client leaves: the iteration ends, the run goes on. */
  signal?: AbortSignal;
}

/** In-process state of a run started on this instance. */
class LocalRun {
  readonly events: RunEvent[] = [];
  readonly listeners = new Set<Listener>();
  finished = false;
}

export class RunEventsUnavailableError extends CodedError {
  readonly code = 'run_events_unavailable';
}

/** The run is over and none of its events after the given id are kept (expired, or all received already). */
export class RunEventsGoneError extends CodedError {
  readonly code = 'run_events_gone';
}

/**
 * The terminal event a follower gets when the run ended without one in Redis:
 * its instance died (`run_lost`), or its last events were not kept.
 */
export function lostRunEvent(id: number, status: RunStatus | null): RunEvent {
  return status === 'abandoned' || status === null || status === 'running'
    ? {
        id,
        event: 'error',
        data: {
          code: 'run_lost' satisfies ErrorCode,
          message: 'The run stopped without finishing (its instance went away). Read the session to see what was saved, then retry.',
        },
      }
    : {
        id,
        event: 'error',
        data: {
          code: 'events_incomplete' satisfies ErrorCode,
          message: `The run ended (${status}) but its last events were not kept. Read the session's messages for the outcome.`,
        },
      };
}

/** Between the last reads of a run that ended, while its terminal event may still be on its way. */
const FOLLOW_POLL_MS = 100;
/** Entries per XRANGE of a catch-up: the catch-up reads page after page until the stream's end or its terminal event. */
const CATCH_UP_PAGE = 500;
/** First pause before a page read that failed or timed out is sent again (doubling, within the catch-up's budget). */
const CATCH_UP_RETRY_MS = 25;
const LOCAL_GRACE_MS = 60_000;

/**
 * A run's status is recorded before its last events reach Redis (each write
 * bounded by the command timeout): for a run that ended, a few more reads
 * settle whether its terminal event comes. True when it came.
 */
async function lastEventsArrive(status: RunStatus | null, readBatch: () => Promise<boolean>): Promise<boolean> {
  const reads = status === 'abandoned' || status === null ? 1 : 5;
  for (let read = 0; read < reads; read += 1) {
    if (read > 0) await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
    if (await readBatch()) return true;
  }
  return false;
}

/** A catch-up read on its way: the run's events after `from`, shared by every follower that attaches after `from`. */
interface CatchUp {
  from: number;
  events: Promise<RunEvent[]>;
}

export function runEventsKey(runId: string): string {
  return `chat_run_events:${runId}`;
}

/**
 * The events of each run: delivered in-process to the live stream, and kept
 * in a Redis stream (`chat_run_events:{run_id}`, with a TTL) so a client can
 * rejoin with Last-Event-ID on any instance. Redis failures are logged and
 * never stop a run; only rejoining from another instance needs Redis.
 */
@Injectable()
export class RunEventsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RunEventsService.name);
  private readonly local = new Map<string, LocalRun>();
  private readonly writeChains = new Map<string, Promise<void>>();
  /** Events of a run waiting for its next batch (the one scheduled after the write on its way). */
  private readonly pending = new Map<string, RunEvent[]>();
  /** Runs whose Redis stream stopped at a write that kept failing: nothing more is written for them. */
  private readonly brokenStreams = new Set<string>();
  private readonly redis: RedisClient;
  private warned = false;

  private readonly commandTimeoutMs: number;
  /** How long one follower's read may take, retries included, before it is answered 503 `run_events_unavailable`. */
  private readonly catchUpBudgetMs: number;
  /** Catch-up reads on their way, by run: followers attaching at about the same time share one. */
  private readonly catchUps = new Map<string, CatchUp[]>();

  /** The live tail of the runs followed from here, on a blocking connection of its own. */
  private readonly tail: RunEventTail;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.commandTimeoutMs = config.redis.commandTimeoutMs;
    this.catchUpBudgetMs = Math.max(this.commandTimeoutMs * 5, 1000);
    this.redis = createRedisClient(config, (error) => this.warn(error));
    const warn = (error: Error) => this.warn(error);
    this.tail = new RunEventTail(createRedisClient(config, warn), this.redis, runEventsKey, this.commandTimeoutMs, warn);
  }

  onModuleInit(): void {
    this.redis.connect().catch((error: Error) => this.warn(error));
    this.tail.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.tail.close();
    await Promise.allSettled([...this.writeChains.values()]);
    await closeRedisClient(this.redis, Math.max(this.commandTimeoutMs * 5, 1000));
  }

  /** Registers a run started here; its events will be published through `publish`. */
  open(runId: string): void {
    this.local.set(runId, new LocalRun());
  }

  publish(runId: string, ...[event, data]: RunEventArgs): RunEvent;
  /** Data taken on trust (tests and benches publish partial events). */
  publish(runId: string, event: RunEventType, data: unknown): RunEvent;
  publish(runId: string, event: RunEventType, data: unknown): RunEvent {
    const run = this.local.get(runId);
    if (!run) throw new Error(`run ${runId} was not opened on this instance`);
    const item = trustedRunEvent(run.events.length + 1, event, data);
    run.events.push(item);
    for (const listener of run.listeners) listener(item);
    this.persist(runId, item);
    if (TERMINAL_EVENTS.has(event)) {
      run.finished = true;
      run.listeners.clear();
      setTimeout(() => this.local.delete(runId), LOCAL_GRACE_MS).unref();
    }
    return item;
  }

  /** Waits until every event of the run has been written to Redis (or failed to). */
  async flushed(runId: string): Promise<void> {
    await this.writeChains.get(runId);
  }

  /**
   * The run's events after `afterId`, then the new ones as they come, until
   * the terminal event, the client leaving (`signal`), or the run being lost
   * (a synthetic `error` event, `run_lost` or `events_incomplete`). Resolves
   * once the catch-up is read, so its errors come before any byte is sent:
   * RunEventsUnavailableError (503) when Redis cannot be read in time,
   * RunEventsGoneError (410) when an ended run's events are no longer kept.
   * The stream's `backlog` is what the catch-up found.
   */
  follow(runId: string, afterId: number, options: FollowOptions): Promise<RunEventStream>;
  /** The same, delivered to `listener`; resolves to the function that stops following. */
  follow(runId: string, afterId: number, listener: Listener, runStatus: RunStatusProbe): Promise<() => void>;
  async follow(runId: string, afterId: number, target: FollowOptions | Listener, runStatus?: RunStatusProbe): Promise<RunEventStream | (() => void)> {
    if (typeof target === 'function') return this.subscribe(runId, afterId, target, runStatus ?? (async () => 'running'));
    const stream = new RunEventStream(target.signal);
    stream.attach(await this.subscribe(runId, afterId, (event) => stream.push(event), target.status));
    return stream;
  }

  /**
   * Delivers the run's events after `afterId`, then follows new ones until a
   * terminal event; returns a function that stops following. A run that is
   * not running (or whose heartbeat stopped) and has no terminal event in
   * Redis never gets one: its followers are sent `lostRunEvent` instead.
   * Throws RunEventsUnavailableError when the run is not here and Redis cannot
   * be read within the cache command timeout.
   */
  private async subscribe(runId: string, afterId: number, listener: Listener, runStatus: RunStatusProbe): Promise<() => void> {
    const run = this.local.get(runId);
    if (run) {
      for (const event of run.events) if (event.id > afterId) listener(event);
      if (!run.finished) run.listeners.add(listener);
      return () => run.listeners.delete(listener);
    }
    return this.followFromRedis(runId, afterId, listener, runStatus);
  }

  private async followFromRedis(runId: string, afterId: number, listener: Listener, runStatus: RunStatusProbe): Promise<() => void> {
    let stopped = false;
    let stopTail: () => void = () => undefined;
    // eslint-disable-next-line prefer-const -- assigned below, after stop() which clears it is defined
    let statusTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      stopped = true;
      stopTail();
      clearInterval(statusTimer);
    };
    // Events reach the listener once, in order, whichever read brought them: the tail's or this follower's own.
    const follower: TailFollower = {
      last: afterId,
      deliver: (event) => {
        if (stopped) return;
        listener(event);
        if (TERMINAL_EVENTS.has(event.event)) stop();
      },
    };
    const readBatch = async (): Promise<boolean> => {
      for (const event of await this.eventsAfter(runId, follower.last)) {
        if (event.id <= follower.last) continue;
        follower.last = event.id;
        if (stopped) return true;
        follower.deliver(event);
        if (TERMINAL_EVENTS.has(event.event)) return true;
      }
      return false;
    };
    try {
      if (await readBatch()) return () => undefined;
      // A database that cannot answer now does not end the stream: the status checks ask again.
      const status = await runStatus().catch((): RunStatus => 'running');
      if (status !== 'running') {
        if (await lastEventsArrive(status, readBatch)) return () => undefined;
        if (follower.last === afterId && status !== 'abandoned' && status !== null) {
          throw new RunEventsGoneError(`The events of run ${runId} are no longer kept, or were all received already`);
        }
        listener(lostRunEvent(follower.last + 1, status));
        return () => undefined;
      }
    } catch (error) {
      if (error instanceof RunEventsGoneError) throw error;
      this.logger.warn({ err: error, run_id: runId }, 'run events cannot be read');
      throw new RunEventsUnavailableError('run events cannot be read (the event store did not answer); retry shortly');
    }
    // Caught up: the live tail follows it with everyone else's, one blocking read for the instance.
    stopTail = this.tail.add(runId, follower);
    // The run's status is checked on its own clock, whether or not Redis answers: a run that ended without its
    // terminal event in the stream (its instance died, its last writes failed) gets one from here.
    let checking = false;
    statusTimer = setInterval(() => {
      if (stopped || checking) return;
      checking = true;
      void (async () => {
        try {
          const status = await runStatus();
          if (status === 'running' || stopped) return;
          if (this.tail.readable && (await lastEventsArrive(status, readBatch).catch(() => false))) return;
          if (!stopped) {
            listener(lostRunEvent(follower.last + 1, status));
            stop();
          }
        } catch (error) {
          this.warn(error as Error);
        } finally {
          checking = false;
        }
      })();
    }, this.config.chat.runHeartbeatMs);
    statusTimer.unref();
    return stop;
  }

  /**
   * The run's events in Redis after `afterId`, up to the stream's end or its
   * terminal event. Single-flight: a read already on its way for the run from
   * `afterId` or before answers this call too (a reconnect storm costs Redis
   * one paged read, not one per client); the caller skips what it has.
   */
  private eventsAfter(runId: string, afterId: number): Promise<RunEvent[]> {
    const onTheirWay = this.catchUps.get(runId) ?? [];
    const shared = onTheirWay.find((read) => read.from <= afterId);
    if (shared) return shared.events;
    const read: CatchUp = { from: afterId, events: this.readPages(runId, afterId) };
    onTheirWay.push(read);
    this.catchUps.set(runId, onTheirWay);
    const settle = () => {
      const left = (this.catchUps.get(runId) ?? []).filter((other) => other !== read);
      if (left.length > 0) this.catchUps.set(runId, left);
      else this.catchUps.delete(runId);
    };
    read.events.then(settle, settle);
    return read.events;
  }

  /** XRANGE page after page (COUNT CATCH_UP_PAGE); a page that fails or is slow is asked again within the budget. */
  private async readPages(runId: string, afterId: number): Promise<RunEvent[]> {
    const deadline = performance.now() + this.catchUpBudgetMs;
    const events: RunEvent[] = [];
    for (let after = afterId; ;) {
      const entries = await this.readPage(runId, after, deadline);
      for (const entry of entries) {
        const event = parseRunEvent(entry.message.payload as string);
        if (event.id <= after) continue;
        events.push(event);
        after = event.id;
        if (TERMINAL_EVENTS.has(event.event)) return events;
      }
      if (entries.length < CATCH_UP_PAGE) return events;
    }
  }

  /**
   * One page. A read that does not answer within the command timeout is sent
   * again, and the first of them to answer wins: a storm of rejoins keeps the
   * event loop busy, and a reply read late is as good as a new one.
   */
  private async readPage(runId: string, afterId: number, deadline: number) {
    const sent: Array<ReturnType<RedisClient['xRange']>> = [];
    for (let attempt = 0; ; attempt += 1) {
      if (this.redis.isReady) sent.push(this.redis.xRange(runEventsKey(runId), `(${afterId}-0`, '+', { COUNT: CATCH_UP_PAGE }));
      const waitMs = Math.max(1, Math.min(this.commandTimeoutMs, deadline - performance.now()));
      try {
        if (sent.length === 0) throw new Error('Redis is not connected');
        return await withTimeoutAfterPendingIo(Promise.any(sent), waitMs, () => new Error(`Redis did not answer within ${waitMs} ms`));
      } catch (error) {
        const pause = CATCH_UP_RETRY_MS * 2 ** attempt;
        if (performance.now() + pause >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
      }
    }
  }

  /**
   * Queues the event for the run's Redis stream. Events are written in
   * batches, after the run's previous write: everything published while a
   * write is on its way (or in the same tick) goes in the next MULTI, one
   * round trip for many tokens, in order and with their ids. A batch that
   * fails is retried a few times (the ids make a retry of a write that did
   * land harmless); if it still fails, the run's later events are not
   * written either, so a reader finds a complete prefix, never a silent gap,
   * and learns from the run's status that the rest is missing.
   */
  private persist(runId: string, event: RunEvent): void {
    const queued = this.pending.get(runId);
    if (queued) {
      queued.push(event); // the batch scheduled below takes it too
      return;
    }
    this.pending.set(runId, [event]);
    const previous = this.writeChains.get(runId) ?? Promise.resolve();
    let batch: RunEvent[] = [];
    const next = previous.then(async () => {
      // From here on, new events start the next batch.
      batch = this.pending.get(runId) ?? [];
      this.pending.delete(runId);
      if (this.brokenStreams.has(runId)) return;
      try {
        await pRetry(() => this.write(runId, batch), { retries: 2, minTimeout: 100, factor: 2, randomize: true, unref: true });
      } catch (error) {
        this.brokenStreams.add(runId);
        throw error;
      }
    });
    const settled = next.catch((error: Error) => this.warn(error));
    this.writeChains.set(runId, settled);
    void settled.then(() => {
      // The run's last batch: nothing more comes for it.
      if (!batch.some((item) => TERMINAL_EVENTS.has(item.event)) || this.pending.has(runId)) return;
      if (this.writeChains.get(runId) === settled) this.writeChains.delete(runId);
      this.brokenStreams.delete(runId);
    });
  }

  /** One MULTI: the batch's events and the stream's TTL, bounded by the command timeout. */
  private async write(runId: string, batch: RunEvent[]): Promise<void> {
    if (!this.redis.isReady) throw new Error('Redis is not connected');
    const key = runEventsKey(runId);
    const multi = this.redis.multi();
    for (const item of batch) multi.xAdd(key, `${item.id}-0`, { payload: JSON.stringify(item) });
    multi.expire(key, this.config.chat.runEventsTtlSeconds);
    // Bounded, so a stalled Redis neither holds the chain (and shutdown) nor grows it without end.
    await withTimeout(multi.exec(), this.commandTimeoutMs, () => new Error(`Redis did not answer within ${this.commandTimeoutMs} ms`)).catch((error: Error) => {
      // An id already there: an earlier attempt landed although its reply did not come back (EXEC runs every
      // command of the batch, so the others were written). node-redis reports them among a MultiErrorReply's replies.
      const replies = ((error as { replies?: unknown[] }).replies ?? []).filter((reply) => reply instanceof Error) as Error[];
      const duplicate = (text: string) => /equal or smaller than the target stream top item/i.test(text);
      if (replies.length > 0 ? replies.every((reply) => duplicate(reply.message)) : duplicate(error.message)) return;
      throw error;
    });
  }

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(`run events not kept in Redis (${error.message}); live streams continue, rejoining from another instance will not work until it is back`);
    setTimeout(() => (this.warned = false), 30_000).unref();
  }
}
