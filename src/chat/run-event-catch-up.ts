import { RedisClient } from '../common/redis-client.js';
import { withTimeoutAfterPendingIo } from '../common/with-timeout.js';
import { parseRunEvent, RunEvent, TERMINAL_EVENTS } from './run-event.js';

/** Entries per XRANGE of a catch-up: the catch-up reads page after page until the stream's end or its terminal event. */
const CATCH_UP_PAGE = 500;
/** First pause before a page read that failed or timed out is sent again (doubling, within the catch-up's budget). */
const CATCH_UP_RETRY_MS = 25;

/** A catch-up read on its way: the run's events after `from`, shared by every follower that attaches after `from`. */
interface CatchUp {
  from: number;
  events: Promise<RunEvent[]>;
}

/**
 * The reads of a run's events already in its Redis stream, for a follower
 * that attaches (or rejoins) on an instance where the run is not running.
 */
export class RunEventCatchUp {
  /** How long one follower's read may take, retries included, before it fails. */
  private readonly budgetMs: number;
  /** Catch-up reads on their way, by run: followers attaching at about the same time share one. */
  private readonly onTheirWay = new Map<string, CatchUp[]>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyOf: (runId: string) => string,
    private readonly commandTimeoutMs: number,
  ) {
    this.budgetMs = Math.max(commandTimeoutMs * 5, 1000);
  }

  /**
   * The run's events in Redis after `afterId`, up to the stream's end or its
   * terminal event. Single-flight: a read already on its way for the run from
   * `afterId` or before answers this call too (a reconnect storm costs Redis
   * one paged read, not one per client); the caller skips what it has.
   */
  eventsAfter(runId: string, afterId: number): Promise<RunEvent[]> {
    const reads = this.onTheirWay.get(runId) ?? [];
    const shared = reads.find((read) => read.from <= afterId);
    if (shared) return shared.events;
    const read: CatchUp = { from: afterId, events: this.readPages(runId, afterId) };
    reads.push(read);
    this.onTheirWay.set(runId, reads);
    const settle = () => {
      const left = (this.onTheirWay.get(runId) ?? []).filter((other) => other !== read);
      if (left.length > 0) this.onTheirWay.set(runId, left);
      else this.onTheirWay.delete(runId);
    };
    read.events.then(settle, settle);
    return read.events;
  }

  /** XRANGE page after page (COUNT CATCH_UP_PAGE); a page that fails or is slow is asked again within the budget. */
  private async readPages(runId: string, afterId: number): Promise<RunEvent[]> {
    const deadline = performance.now() + this.budgetMs;
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
      if (this.redis.isReady) sent.push(this.redis.xRange(this.keyOf(runId), `(${afterId}-0`, '+', { COUNT: CATCH_UP_PAGE }));
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
}
