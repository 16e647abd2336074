import pRetry from 'p-retry';
import { RedisClient } from '../common/redis-client.js';
import { withTimeout } from '../common/with-timeout.js';
import { traceEventBatch } from '../observability/spans.js';
import { RunEvent, TERMINAL_EVENTS } from './run-event.js';

/**
 * Writes each run's events to its Redis stream (`chat_run_events:<run_id>`, see RedisKeys.runEvents,
 * with a TTL), in order, batched, never holding the run up: a write that
 * fails is reported to `warn`, not thrown.
 */
export class RunEventWriter {
  private readonly writeChains = new Map<string, Promise<void>>();
  /** Events of a run waiting for its next batch (the one scheduled after the write on its way). */
  private readonly pending = new Map<string, RunEvent[]>();
  /** Runs whose Redis stream stopped at a write that kept failing: nothing more is written for them. */
  private readonly brokenStreams = new Set<string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyOf: (runId: string) => string,
    private readonly commandTimeoutMs: number,
    private readonly ttlSeconds: number,
    private readonly warn: (error: Error) => void,
  ) {}

  /** Waits until every event of the run has been written to Redis (or failed to). */
  async flushed(runId: string): Promise<void> {
    await this.writeChains.get(runId);
  }

  /** Waits until the writes of every run on their way have landed or failed. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writeChains.values()]);
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
  persist(runId: string, event: RunEvent): void {
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

  /** One MULTI, traced as one span (not a span per command: a streamed answer writes an event per token). */
  private write(runId: string, batch: RunEvent[]): Promise<void> {
    return traceEventBatch(batch.length, () => this.send(runId, batch));
  }

  /** One MULTI: the batch's events and the stream's TTL, bounded by the command timeout. */
  private async send(runId: string, batch: RunEvent[]): Promise<void> {
    if (!this.redis.isReady) throw new Error('Redis is not connected');
    const key = this.keyOf(runId);
    const multi = this.redis.multi();
    for (const item of batch) multi.xAdd(key, `${item.id}-0`, { payload: JSON.stringify(item) });
    multi.expire(key, this.ttlSeconds);
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
}
