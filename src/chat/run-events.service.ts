import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { createClient } from '@keyv/redis';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RunEvent, SseEventType, TERMINAL_EVENTS } from './sse.js';

type Listener = (event: RunEvent) => void;

/** In-process state of a run started on this instance. */
class LocalRun {
  readonly events: RunEvent[] = [];
  readonly listeners = new Set<Listener>();
  finished = false;
}

export class RunEventsUnavailableError extends Error {}

const FOLLOW_POLL_MS = 100;
const LOCAL_GRACE_MS = 60_000;

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
  private readonly redis;
  private warned = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.redis = createClient({
      url: config.redis.url,
      socket: {
        connectTimeout: Math.max(config.redis.commandTimeoutMs, 500),
        reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
      },
    });
    this.redis.on('error', (error: Error) => this.warn(error));
  }

  onModuleInit(): void {
    this.redis.connect().catch((error: Error) => this.warn(error));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.writeChains.values()]);
    if (this.redis.isOpen) await this.redis.close().catch(() => undefined);
    else this.redis.destroy();
  }

  /** Registers a run started here; its events will be published through `publish`. */
  open(runId: string): void {
    this.local.set(runId, new LocalRun());
  }

  publish(runId: string, event: SseEventType, data: unknown): RunEvent {
    const run = this.local.get(runId);
    if (!run) throw new Error(`run ${runId} was not opened on this instance`);
    const item: RunEvent = { id: run.events.length + 1, event, data };
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
   * Delivers the run's events after `afterId`, then follows new ones until a
   * terminal event; returns a function that stops following.
   * Throws RunEventsUnavailableError when the run is not here and Redis cannot be read.
   */
  async follow(runId: string, afterId: number, listener: Listener, isRunning: () => Promise<boolean>): Promise<() => void> {
    const run = this.local.get(runId);
    if (run) {
      for (const event of run.events) if (event.id > afterId) listener(event);
      if (!run.finished) run.listeners.add(listener);
      return () => run.listeners.delete(listener);
    }
    return this.followFromRedis(runId, afterId, listener, isRunning);
  }

  private async followFromRedis(
    runId: string,
    afterId: number,
    listener: Listener,
    isRunning: () => Promise<boolean>,
  ): Promise<() => void> {
    let stopped = false;
    let last = afterId;
    const readBatch = async (): Promise<boolean> => {
      const entries = await this.redis.xRange(runEventsKey(runId), `(${last}-0`, '+', { COUNT: 500 });
      for (const entry of entries) {
        const event = JSON.parse(entry.message.payload as string) as RunEvent;
        last = event.id;
        listener(event);
        if (TERMINAL_EVENTS.has(event.event)) return true;
      }
      return false;
    };
    let done: boolean;
    try {
      done = await readBatch();
    } catch (error) {
      throw new RunEventsUnavailableError(`run events cannot be read: ${(error as Error).message}`);
    }
    if (done) return () => undefined;
    const poll = async () => {
      let idleRounds = 0;
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
        try {
          const before = last;
          if (await readBatch()) return;
          idleRounds = last === before ? idleRounds + 1 : 0;
          // A run that died without a terminal event must not keep followers forever.
          if (idleRounds > 0 && idleRounds % 50 === 0 && !(await isRunning())) return;
        } catch (error) {
          this.warn(error as Error);
        }
      }
    };
    void poll();
    return () => {
      stopped = true;
    };
  }

  private persist(runId: string, event: RunEvent): void {
    const key = runEventsKey(runId);
    const ttl = this.config.chat.runEventsTtlSeconds;
    const previous = this.writeChains.get(runId) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (!this.redis.isReady) throw new Error('Redis is not connected');
      await this.redis
        .multi()
        .xAdd(key, `${event.id}-0`, { payload: JSON.stringify(event) })
        .expire(key, ttl)
        .exec();
    });
    const settled = next.catch((error: Error) => this.warn(error));
    this.writeChains.set(runId, settled);
    if (TERMINAL_EVENTS.has(event.event)) void settled.then(() => this.writeChains.delete(runId));
  }

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(`run events not kept in Redis (${error.message}); live streams continue, rejoining from another instance will not work until it is back`);
    setTimeout(() => (this.warned = false), 30_000).unref();
  }
}
