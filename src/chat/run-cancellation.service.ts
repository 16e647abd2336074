import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { closeRedisClient, CLUSTER_REDISCOVERED, createRedisClient, RedisClient } from '../common/redis-client.js';
import { RedisKeys } from '../common/redis-keys.js';
import { withTimeout } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

/** Pauses before a cancel request that Redis did not take is sent again (a duplicate aborts nothing twice). */
const PUBLISH_RETRIES_MS = [500, 1000, 2000];

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
        if (!this.config.redis.cluster) return subscriber.subscribe(this.keys.runCancel(0), this.onCancel);
        // A failover (or a node that left) drops the sharded subscriptions of the nodes that went: they are made again.
        subscriber.on(CLUSTER_REDISCOVERED, () => void this.subscribeShards(subscriber).catch((error: Error) => this.warn(error)));
        return this.subscribeShards(subscriber);
      })
      .catch((error: Error) => this.warn(error));
  }

  private readonly onCancel = (runId: string) => void this.abortLocal(runId);

  /** Listens on every run shard's cancel channel (sharded pub/sub, each on its master); again for a channel already listened to changes nothing. */
  private async subscribeShards(subscriber: RedisClient): Promise<void> {
    const channels = Array.from({ length: this.keys.runShards }, (_, shard) => this.keys.runCancel(shard));
    await Promise.all(channels.map((channel) => subscriber.sSubscribe(channel, this.onCancel)));
  }

  private closing = false;

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
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
    if (await this.publish(runId)) return;
    // Sent again a few times in the background, within the cancel's wait: a Redis that was away for a moment (a cluster
    // client that learns of a failover on its first failure) still carries it before the heartbeat would.
    void (async () => {
      for (const pause of PUBLISH_RETRIES_MS) {
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (this.closing || (await this.publish(runId))) return;
      }
    })();
  }

  /** One publish of a cancel request; whether Redis took it. */
  private async publish(runId: string): Promise<boolean> {
    try {
      const channel = this.keys.runCancel(this.keys.runShard(runId));
      const published = this.config.redis.cluster ? this.publisher!.sPublish(channel, runId) : this.publisher!.publish(channel, runId);
      await withTimeout(published, this.config.redis.commandTimeoutMs, () => new Error('Redis did not answer in time'));
      return true;
    } catch (error) {
      this.warn(error as Error);
      return false;
    }
  }

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(`cancel requests cannot travel through Redis (${error.message}); remote runs stop at their next heartbeat instead`);
    setTimeout(() => (this.warned = false), 30_000).unref();
  }
}
