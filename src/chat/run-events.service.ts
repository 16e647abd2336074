import { CodedError, ErrorCode } from '../common/coded-error.js';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { closeRedisClient, createRedisClient, RedisClient } from '../common/redis-client.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../observability/metrics.js';
import type { RunStatus } from './run-registry.service.js';
import { RunEventCatchUp } from './run-event-catch-up.js';
import { RUN_EVENT_TAIL_CLIENT, RunEventTail, TailFollower } from './run-event-tail.js';
import { RunEventWriter } from './run-event-writer.js';
import { RedisKeys } from '../common/redis-keys.js';
import { isTerminal, RunEvent, RunEventArgs, runEvent } from './run-event.js';
import { RunEventStream } from './run-event-stream.js';

/** The run's current status, from the runs table (null: the run is gone with its session). */
export type RunStatusProbe = () => Promise<RunStatus | null>;

/** How a client follows a run: see RunEventsService.follow. */
export interface FollowOptions {
  /** The run's status, asked when the run is followed from Redis (to tell a lost run). */
  status: RunStatusProbe;
  /** Aborted when the client leaves: the iteration ends, the run goes on. */
  signal?: AbortSignal;
}

/** Where the events of every run are kept for rejoining from any instance. */
interface RedisEventStore {
  redis: RedisClient;
  /** Each run's events on their way to its Redis stream. */
  writer: RunEventWriter;
  /** Reads of the events already in a run's Redis stream, for a follower that attaches. */
  catchUp: RunEventCatchUp;
  /** The live tail of the runs followed from here, on a blocking connection of its own. */
  tail: RunEventTail;
}

/** In-process state of a run started on this instance. */
class LocalRun {
  readonly events: RunEvent[] = [];
  /** The streams of the clients following it here, until its terminal event. */
  readonly followers = new Set<RunEventStream>();
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

/** The terminal event a follower gets where the run's stream has a gap: events after `id - 1` were lost by the event store. */
export function lostEventsEvent(id: number): RunEvent {
  return {
    id,
    event: 'error',
    data: {
      code: 'events_incomplete' satisfies ErrorCode,
      message: 'Events of this run were lost by the event store (a Redis failover); the run may still finish. Read the session later for its outcome.',
    },
  };
}

/** Between the last reads of a run that ended, while its terminal event may still be on its way. */
const FOLLOW_POLL_MS = 100;
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

const ONE_REDIS_KEYS = new RedisKeys({ cluster: null });

/** A run's event stream on one Redis (or Sentinel); on a cluster the name carries the run's shard tag (RedisKeys). */
export function runEventsKey(runId: string): string {
  return ONE_REDIS_KEYS.runEvents(runId);
}

/**
 * The events of each run: delivered in-process to the live stream, and kept
 * in a Redis stream (`chat_run_events:<run_id>`, with a TTL) so a client can
 * rejoin with Last-Event-ID on any instance. Redis failures are logged and
 * never stop a run; only rejoining from another instance needs Redis.
 */
@Injectable()
export class RunEventsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RunEventsService.name);
  private readonly local = new Map<string, LocalRun>();
  private warned = false;

  private readonly commandTimeoutMs: number;
  /** Null without Redis (REDIS_URL=none, one instance): a run's events are kept here, for as long as Redis would keep them. */
  private readonly store: RedisEventStore | null;
  /** How long a finished run's events stay in memory: a grace period, or (without Redis) the events' whole lifetime. */
  private readonly localKeepMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() metrics?: Metrics,
  ) {
    this.commandTimeoutMs = config.redis.commandTimeoutMs;
    const warn = (error: Error) => this.warn(error);
    const redis = createRedisClient(config, warn);
    const keys = new RedisKeys(config.redis);
    const keyOf = (runId: string) => keys.runEvents(runId);
    this.store = redis
      ? {
          redis,
          writer: new RunEventWriter(redis, keyOf, this.commandTimeoutMs, config.chat.runEventsTtlSeconds, warn),
          catchUp: new RunEventCatchUp(redis, keyOf, this.commandTimeoutMs),
          tail: new RunEventTail(() => createRedisClient(config, warn, RUN_EVENT_TAIL_CLIENT)!, redis, keys, this.commandTimeoutMs, warn),
        }
      : null;
    this.localKeepMs = this.store ? LOCAL_GRACE_MS : config.chat.runEventsTtlSeconds * 1000;
    metrics?.gauge(
      'chat_run_followers',
      "Clients following a run's events here, by where the events come from: local (the run runs here) or redis (it runs on another instance)",
      ['source'],
      () =>
        Promise.resolve([
          [{ source: 'local' }, this.localFollowers()],
          [{ source: 'redis' }, this.store?.tail.followerCount ?? 0],
        ]),
    );
  }

  private localFollowers(): number {
    let count = 0;
    for (const run of this.local.values()) count += run.followers.size;
    return count;
  }

  onModuleInit(): void {
    if (!this.store) return;
    this.store.redis.connect().catch((error: Error) => this.warn(error));
    this.store.tail.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.store) return;
    await this.store.tail.close();
    await this.store.writer.settled();
    await closeRedisClient(this.store.redis, Math.max(this.commandTimeoutMs * 5, 1000));
  }

  /** Registers a run started here; its events will be published through `publish`. */
  open(runId: string): void {
    this.local.set(runId, new LocalRun());
  }

  /** The run's next event (`publish(runId, 'token', {text})`): to its followers here, and on its way to Redis. */
  publish(runId: string, ...args: RunEventArgs): RunEvent {
    const run = this.local.get(runId);
    if (!run) throw new Error(`run ${runId} was not opened on this instance`);
    const item = runEvent(run.events.length + 1, ...args);
    run.events.push(item);
    for (const stream of run.followers) stream.push(item);
    this.store?.writer.persist(runId, item);
    if (isTerminal(item)) {
      run.finished = true;
      run.followers.clear();
      setTimeout(() => this.local.delete(runId), this.localKeepMs).unref();
    }
    return item;
  }

  /** Waits until every event of the run has been written to Redis (or failed to). */
  async flushed(runId: string): Promise<void> {
    await this.store?.writer.flushed(runId);
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
  async follow(runId: string, afterId: number, { status, signal }: FollowOptions): Promise<RunEventStream> {
    const stream = new RunEventStream(signal);
    const run = this.local.get(runId);
    if (run) {
      // Started here: its events are in memory, the next ones are pushed to the stream as they are published.
      for (const event of run.events) if (event.id > afterId) stream.push(event);
      if (!run.finished) run.followers.add(stream);
      stream.attach(() => run.followers.delete(stream));
      return stream;
    }
    if (!this.store) {
      await this.followLostRun(runId, afterId, stream, status);
      return stream;
    }
    stream.attach(await this.followFromRedis(this.store, runId, afterId, stream, status));
    return stream;
  }

  /**
   * Without Redis, a run this process does not hold ran in an earlier one:
   * it is lost when it never ended, and its events are gone when it did.
   */
  private async followLostRun(runId: string, afterId: number, stream: RunEventStream, runStatus: RunStatusProbe): Promise<void> {
    const status = await runStatus().catch((error: Error) => {
      this.logger.warn({ err: error, run_id: runId }, 'run status cannot be read');
      throw new RunEventsUnavailableError('the run cannot be read (the database did not answer); retry shortly');
    });
    if (status !== 'running' && status !== 'abandoned' && status !== null) {
      throw new RunEventsGoneError(`The events of run ${runId} are no longer kept, or were all received already`);
    }
    stream.push(lostRunEvent(afterId + 1, status));
  }

  /**
   * Pushes the run's events in Redis after `afterId` to `stream`, then the
   * live tail's until a terminal event; resolves to the function that stops
   * following. A run that is not running (or whose heartbeat stopped) and has
   * no terminal event in Redis never gets one: its stream is sent
   * `lostRunEvent` instead. Throws RunEventsUnavailableError when Redis cannot
   * be read within the catch-up's budget, RunEventsGoneError when an ended
   * run has nothing left to read.
   */
  private async followFromRedis({ catchUp, tail }: RedisEventStore, runId: string, afterId: number, stream: RunEventStream, runStatus: RunStatusProbe): Promise<() => void> {
    let stopped = false;
    let stopTail: () => void = () => undefined;
    // eslint-disable-next-line prefer-const -- assigned below, after stop() which clears it is defined
    let statusTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      stopped = true;
      stopTail();
      clearInterval(statusTimer);
    };
    // Events reach the stream once, in order, whichever read brought them: the tail's or this follower's own.
    // Ids are consecutive: one missing (writes a Redis failover lost: the new master had not received them) ends
    // the stream with what came before it, never a gap.
    let delivered = afterId;
    const follower: TailFollower = {
      last: afterId,
      deliver: (event) => {
        if (stopped) return;
        if (event.id !== delivered + 1) {
          stream.push(lostEventsEvent(delivered + 1));
          stop();
          return;
        }
        delivered = event.id;
        stream.push(event);
        if (isTerminal(event)) stop();
      },
    };
    const readBatch = async (): Promise<boolean> => {
      for (const event of await catchUp.eventsAfter(runId, follower.last)) {
        if (event.id <= follower.last) continue;
        follower.last = event.id;
        if (stopped) return true;
        follower.deliver(event);
        if (isTerminal(event)) return true;
      }
      return false;
    };
    try {
      // A terminal event, or a gap that ended the stream.
      if ((await readBatch()) || stopped) return () => undefined;
      // A database that cannot answer now does not end the stream: the status checks ask again.
      const status = await runStatus().catch((): RunStatus => 'running');
      if (status !== 'running') {
        if ((await lastEventsArrive(status, readBatch)) || stopped) return () => undefined;
        if (follower.last === afterId && status !== 'abandoned' && status !== null) {
          throw new RunEventsGoneError(`The events of run ${runId} are no longer kept, or were all received already`);
        }
        stream.push(lostRunEvent(follower.last + 1, status));
        return () => undefined;
      }
    } catch (error) {
      if (error instanceof RunEventsGoneError) throw error;
      this.logger.warn({ err: error, run_id: runId }, 'run events cannot be read');
      throw new RunEventsUnavailableError('run events cannot be read (the event store did not answer); retry shortly');
    }
    // Caught up: the live tail follows it with everyone else's, one blocking read for the instance.
    stopTail = tail.add(runId, follower);
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
          if (tail.readable(runId) && (await lastEventsArrive(status, readBatch).catch(() => false))) return;
          if (!stopped) {
            stream.push(lostRunEvent(follower.last + 1, status));
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

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(`run events not kept in Redis (${error.message}); live streams continue, rejoining from another instance will not work until it is back`);
    setTimeout(() => (this.warned = false), 30_000).unref();
  }
}
