import { Logger } from '@nestjs/common';
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { IoredisTarget } from '../../../common/redis-client.js';
import { withTimeout } from '../../../common/with-timeout.js';
import { IngestQueue, IngestQueueEvents, IngestQueueHold, IngestTask, PermanentIngestError } from './ingest-queue.js';
import { TraceCarrier, traceCarrierOf } from '../../../observability/queue-spans.js';

export interface BullmqIngestQueueOptions {
  /** Where Redis is: a URL, (Sentinel) ioredis options naming the sentinels and the master, or a cluster's nodes. */
  redis: IoredisTarget;
  /** The queues' key prefix (RedisKeys.queuePrefix: a hash tag on a cluster). */
  prefix: string;
  /** Deployments (and test runs) sharing one Redis keep their own queues: named after the database's own id. */
  name: string;
  /** CACHE_COMMAND_TIMEOUT_MS: how long a queue command may wait for Redis (at least a second). */
  commandTimeoutMs: number;
  /** KNOWLEDGE_INGEST_LOCK_MS: a dead worker's job moves on to another worker once its lock lapses. */
  lockMs: number;
  /** How often a job whose worker died is taken over (as often as it may be tried). */
  maxStalledCount: number;
}

type Connection = Redis | Cluster;

/**
 * The ingest queue on Redis (BullMQ): jobs are shared by every instance,
 * whose workers take them; a job whose worker died is taken over by another
 * once its lock lapses. Its events reach the watchers on every instance.
 */
export class BullmqIngestQueue implements IngestQueue {
  private readonly logger = new Logger('IngestJobs');
  private readonly connections: Connection[] = [];
  private queue: Queue;
  /** Set when the queue's connection failed while BullMQ was still setting it up: that Queue never works again. */
  private queueBroken = false;
  private queueConnection!: Connection;
  private readonly events: QueueEvents;
  private worker: Worker | null = null;
  private redisDown = false;
  private closing = false;
  /** Attempts this instance's worker is running. */
  private running = 0;

  constructor(
    private readonly options: BullmqIngestQueueOptions,
    listeners: IngestQueueEvents,
  ) {
    this.queue = this.openQueue();
    this.events = new QueueEvents(options.name, { prefix: this.options.prefix, connection: this.redis() });
    this.events.on('error', (error) => this.onRedisError(error));
    for (const event of ['active', 'completed', 'failed', 'waiting', 'delayed'] as const) {
      this.events.on(event, ({ jobId }: { jobId: string }) => listeners.moved(jobId));
    }
    this.events.on('progress', ({ jobId, data }: { jobId: string; data: unknown }) => listeners.progress(jobId, data));
  }

  readonly system = 'bullmq';

  add(id: string, attempts: number, carrier?: TraceCarrier): Promise<void> {
    const adding = this.liveQueue().add('ingest', carrier && Object.keys(carrier).length > 0 ? { id, trace: carrier } : { id }, {
      jobId: id,
      attempts,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 24 * 3600, count: 1000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    });
    return this.inTime(adding).then(() => undefined);
  }

  async remove(id: string): Promise<void> {
    await this.inTime(this.liveQueue().remove(id));
  }

  async hold(id: string): Promise<IngestQueueHold> {
    const queued = await this.inTime(this.liveQueue().getJob(id));
    if (!queued) return 'absent';
    return (await this.inTime(queued.getState())) === 'failed' ? 'failed' : 'held';
  }

  startWorker(process: (task: IngestTask) => Promise<unknown>, concurrency: number): void {
    const { lockMs, maxStalledCount } = this.options;
    this.worker = new Worker(this.queue.name, (job) => this.run(job, process), {
      prefix: this.options.prefix,
      connection: this.redis(),
      concurrency,
      lockDuration: lockMs,
      stalledInterval: lockMs,
      maxStalledCount,
    });
    this.worker.on('error', (error) => this.onRedisError(error));
  }

  async stopWorker(budgetMs: number): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // Jobs under way finish while they can; past the budget they are left to another instance (their lock lapses).
    if (this.running === 0) {
      // Nothing to finish: a graceful close would only wait for Redis to answer its blocking read.
      await withTimeout(worker.close(true), 1000, () => new Error('timeout')).catch(() => undefined);
      return;
    }
    await withTimeout(worker.close(), budgetMs, () => new Error('ingest jobs did not finish in time')).catch((error: Error) => {
      this.logger.warn(`${error.message}: another instance takes them over`);
      void worker.close(true).catch(() => undefined);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    // Closing waits for Redis; an unreachable one must not hold the shutdown.
    const closing = [this.events.close(), this.queue.close()].map((p) => withTimeout(p, 1000, () => new Error('timeout')).catch(() => undefined));
    await Promise.all(closing);
    for (const connection of this.connections) connection.disconnect();
  }

  /**
   * The queue jobs are added to. Adding fails at once while Redis is away
   * (the reconciler queues the job later), so its connection gives up on a
   * command after one reconnection; the worker and the events wait for Redis.
   */
  private openQueue(): Queue {
    const connection = this.redis({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const queue = new Queue(this.options.name, { prefix: this.options.prefix, connection });
    this.queueConnection = connection;
    queue.on('error', (error) => this.queue === queue && this.onRedisError(error));
    // BullMQ reads the server's version once, right after connecting. A connection lost before the reply, and refused at
    // its next attempt (Redis stopping as the service starts), fails that read, and with it every later call of this Queue.
    queue.waitUntilReady().catch((error: Error) => {
      if (this.queue !== queue || this.closing) return;
      this.queueBroken = true;
      this.logger.warn(`ingest queue: Redis went away while the queue was being set up (${error.message}); it is set up again`);
    });
    return queue;
  }

  /** The queue, set up again if its set-up failed. */
  private liveQueue(): Queue {
    if (!this.queueBroken) return this.queue;
    const broken = this.queue;
    const connection = this.queueConnection;
    this.connections.splice(this.connections.indexOf(connection), 1);
    // What the old connection says while it closes is no news about Redis.
    connection.removeAllListeners('error').on('error', () => undefined);
    this.queueBroken = false;
    this.queue = this.openQueue();
    void withTimeout(broken.close(), 1000, () => new Error('timeout'))
      .catch(() => undefined)
      .finally(() => connection.disconnect());
    return this.queue;
  }

  private async run(job: Job, process: (task: IngestTask) => Promise<unknown>): Promise<unknown> {
    this.running += 1;
    try {
      return await process({
        id: String(job.id),
        attemptsMade: job.attemptsMade,
        maxAttempts: job.opts.attempts ?? 1,
        carrier: traceCarrierOf((job.data as { trace?: unknown } | undefined)?.trace),
        reportProgress: (progress) => job.updateProgress(progress),
      });
    } catch (error) {
      throw error instanceof PermanentIngestError ? new UnrecoverableError(error.message) : error;
    } finally {
      this.running -= 1;
    }
  }

  /** A Redis that does not answer (stopped, partitioned) must not hold the caller. */
  private inTime<T>(operation: Promise<T>): Promise<T> {
    return withTimeout(operation, Math.max(this.options.commandTimeoutMs, 1000), () => new Error('Redis did not answer in time'));
  }

  private redis(options: { enableOfflineQueue?: boolean; maxRetriesPerRequest?: number | null } = {}): Connection {
    const retry = (attempt: number) => Math.min(100 * 2 ** attempt, 2000);
    const settings: RedisOptions = {
      ...this.options.redis.options,
      // BullMQ's blocking commands must wait out an outage rather than fail.
      maxRetriesPerRequest: null,
      connectTimeout: Math.max(this.options.commandTimeoutMs, 500),
      retryStrategy: retry,
      // Behind Sentinel: after a failover, a connection to the old master (now a replica) reconnects to the new one.
      reconnectOnError: (error) => /^READONLY/.test(error.message),
      ...options,
    };
    const { url, cluster } = this.options.redis;
    const connection = cluster
      ? new Cluster(cluster.nodes, {
          ...cluster.options,
          redisOptions: settings,
          clusterRetryStrategy: retry,
          ...(options.enableOfflineQueue === undefined ? {} : { enableOfflineQueue: options.enableOfflineQueue }),
        })
      : url === undefined
        ? new Redis(settings)
        : new Redis(url, settings);
    connection.on('error', (error) => this.onRedisError(error));
    connection.on('ready', () => {
      if (this.redisDown) this.logger.log('Redis answers again: ingest jobs go on');
      this.redisDown = false;
    });
    this.connections.push(connection);
    return connection;
  }

  private onRedisError(error: Error): void {
    if (this.redisDown || this.closing) return;
    this.redisDown = true;
    this.logger.warn(`ingest queue: Redis unavailable (${error.message}); uploads are stored and queued when it answers`);
  }
}
