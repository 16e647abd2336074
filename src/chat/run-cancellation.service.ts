import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { closeRedisClient, createRedisClient, RedisClient } from '../common/redis-client.js';
import { RedisKeys } from '../common/redis-keys.js';
import { withTimeout } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

/** Why a run's signal was aborted: the user cancelled it. */
export class RunCancelledSignal extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} was cancelled`);
    this.name = 'RunCancelledSignal';
  }
}

/**
 * Cancelling runs across instances: each run started here registers an
 * AbortController; a cancel request aborts it at once when the run is local
 * and is published on Redis for the instance that runs it otherwise
 * (`chat_run_cancel`; on a cluster, sharded pub/sub on the channel of the
 * run's shard, which every instance listens to). Redis
 * down only slows a remote cancel down: the heartbeat of a run marked
 * cancelled in the database aborts it too (see RunControl.watch).
 */
@Injectable()
export class RunCancellation implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RunCancellation.name);
  private readonly local = new Map<string, AbortController>();
  /** Null without Redis (one instance): every run it could cancel runs here. */
  private readonly publisher: RedisClient | null;
  private readonly subscriber: RedisClient | null;
  private readonly keys: RedisKeys;
  private warned = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.keys = new RedisKeys(config.redis);
    this.publisher = createRedisClient(config, (error) => this.warn(error));
    this.subscriber = createRedisClient(config, (error) => this.warn(error));
  }

  /** Resolves once this instance listens for cancel requests (it never rejects: without Redis, heartbeats stop cancelled runs). */
  listening: Promise<void> = Promise.resolve();

  onModuleInit(): void {
    const subscriber = this.subscriber;
    if (!this.publisher || !subscriber) return;
    this.publisher.connect().catch((error: Error) => this.warn(error));
    this.listening = subscriber
      .connect()
      .then(() => {
        const onCancel = (runId: string) => void this.abortLocal(runId);
        if (!this.config.redis.cluster) return subscriber.subscribe(this.keys.runCancel(0), onCancel);
        const channels = Array.from({ length: this.keys.runShards }, (_, shard) => this.keys.runCancel(shard));
        return Promise.all(channels.map((channel) => subscriber.sSubscribe(channel, onCancel))).then(() => undefined);
      })
      .catch((error: Error) => this.warn(error));
  }

  async onApplicationShutdown(): Promise<void> {
    const timeoutMs = Math.max(this.config.redis.commandTimeoutMs * 5, 1000);
    await Promise.all([closeRedisClient(this.subscriber, timeoutMs), closeRedisClient(this.publisher, timeoutMs)]);
  }

  /** The signal a run started here is aborted with when it is cancelled. */
  register(runId: string): AbortSignal {
    const controller = new AbortController();
    this.local.set(runId, controller);
    return controller.signal;
  }

  release(runId: string): void {
    this.local.delete(runId);
  }

  /** Aborts the run here, when it runs here; true when it did. `reason` is why (a cancel by default). */
  abortLocal(runId: string, reason: Error = new RunCancelledSignal(runId)): boolean {
    const controller = this.local.get(runId);
    if (!controller) return false;
    if (!controller.signal.aborted) controller.abort(reason);
    return true;
  }

  /** Aborts every run started here (the instance shuts down); answers how many. */
  abortAll(reason: Error): number {
    for (const runId of this.local.keys()) this.abortLocal(runId, reason);
    return this.local.size;
  }

  /** Asks whichever instance runs the run to abort it. */
  async request(runId: string): Promise<void> {
    if (this.abortLocal(runId) || !this.publisher) return;
    try {
      const channel = this.keys.runCancel(this.keys.runShard(runId));
      const published = this.config.redis.cluster ? this.publisher.sPublish(channel, runId) : this.publisher.publish(channel, runId);
      await withTimeout(published, this.config.redis.commandTimeoutMs, () => new Error('Redis did not answer in time'));
    } catch (error) {
      this.warn(error as Error);
    }
  }

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(`cancel requests cannot travel through Redis (${error.message}); remote runs stop at their next heartbeat instead`);
    setTimeout(() => (this.warned = false), 30_000).unref();
  }
}
