import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { closeRedisClient, RedisClient } from '../common/redis-client.js';
import type { RedisKeys } from '../common/redis-keys.js';
import { withTimeout } from '../common/with-timeout.js';
import { parseRunEvent, type RunEvent, TERMINAL_EVENTS } from './run-event.js';

/** How long one blocking read waits for new events before it is issued again (new followers wake it at once). */
const BLOCK_MS = 5_000;
/** The name the tail's reading connections give themselves (CLIENT SETNAME): CLIENT LIST shows their blocked reads. */
export const RUN_EVENT_TAIL_CLIENT = 'rag-chat-run-event-tail';
/** Pause after a failed read, before the next. */
const RETRY_MS = 100;
/** Entries read at most per stream and read. */
const READ_COUNT = 500;

/** One client's stream of a run, past its catch-up: it gets each event after `last`, once. */
export interface TailFollower {
  last: number;
  deliver(event: RunEvent): void;
}

interface FollowedRun {
  runId: string;
  key: string;
  /** The id the next read starts after: the lowest `last` of the run's followers. */
  cursor: number;
  followers: Set<TailFollower>;
}

/**
 * The live tail of the runs this instance's clients follow from another
 * instance's Redis streams: one `XREAD BLOCK` per run shard, each on a
 * connection of its own, reads every followed stream of the shard at once
 * and fans the events out in process, so Redis sees one read per shard and
 * batch of events, whatever the number of followers. On one Redis there is
 * one shard; on a cluster the streams of a shard share a hash tag (see
 * RedisKeys), so the read never crosses slots and goes to the one master
 * that serves the shard.
 */
export class RunEventTail {
  private readonly shards: ShardTail[] = [];

  constructor(
    newReader: () => RedisClient,
    writer: RedisClient,
    private readonly keys: RedisKeys,
    commandTimeoutMs: number,
    warn: (error: Error) => void,
  ) {
    const instance = randomUUID();
    for (let shard = 0; shard < keys.runShards; shard += 1) {
      this.shards.push(new ShardTail(newReader(), writer, keys.tailWake(shard, instance), (runId) => keys.runEvents(runId), commandTimeoutMs, warn));
    }
  }

  /** Opens each shard's reading connection. */
  connect(): void {
    for (const shard of this.shards) shard.connect();
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.close()));
  }

  /** The followers of every run followed here. */
  get followerCount(): number {
    return this.shards.reduce((count, shard) => count + shard.followerCount, 0);
  }

  /** Follows `runId` for `follower` from its `last` on; returns the function that stops it. */
  add(runId: string, follower: TailFollower): () => void {
    return this.shardOf(runId).add(runId, follower);
  }

  /** Whether the last read of the run's shard answered (followers' run-status checks only trust the stream when it does). */
  readable(runId: string): boolean {
    return this.shardOf(runId).readable;
  }

  private shardOf(runId: string): ShardTail {
    return this.shards[this.keys.runShard(runId)];
  }
}

/**
 * The tail of one shard: one `XREAD BLOCK` reads every followed stream of
 * the shard. A follower added while the read is blocked wakes it through a
 * stream of this instance's own, so it is read from the next event on.
 */
class ShardTail {
  private readonly logger = new Logger(RunEventTail.name);
  private readonly runs = new Map<string, FollowedRun>();
  private readonly byKey = new Map<string, FollowedRun>();
  private lastWake = '0-0';
  private reading = false;
  private closed = false;
  /** Whether the last read answered. */
  readable = true;

  constructor(
    private readonly reader: RedisClient,
    private readonly writer: RedisClient,
    private readonly wakeKey: string,
    private readonly keyOf: (runId: string) => string,
    private readonly commandTimeoutMs: number,
    private readonly warn: (error: Error) => void,
  ) {}

  connect(): void {
    this.reader.connect().catch((error: Error) => this.warn(error));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.runs.clear();
    this.byKey.clear();
    // A blocked read would hold a graceful close for BLOCK_MS: the connection is dropped instead.
    await closeRedisClient(this.reader, 0);
  }

  get followerCount(): number {
    let count = 0;
    for (const run of this.runs.values()) count += run.followers.size;
    return count;
  }

  /** Follows `runId` for `follower` from its `last` on; returns the function that stops it. */
  add(runId: string, follower: TailFollower): () => void {
    let run = this.runs.get(runId);
    if (!run) {
      run = { runId, key: this.keyOf(runId), cursor: follower.last, followers: new Set() };
      this.runs.set(runId, run);
      this.byKey.set(run.key, run);
    }
    // Events the read already passed but this follower has not seen are read again (the others skip them by id).
    run.cursor = Math.min(run.cursor, follower.last);
    run.followers.add(follower);
    this.wake();
    if (!this.reading) void this.readLoop();
    return () => this.remove(runId, follower);
  }

  /** Delivers the events a read brought to the run's followers, each event to each follower once. */
  private deliver(runId: string, events: RunEvent[]): void {
    const run = this.runs.get(runId);
    if (!run) return;
    for (const event of events) {
      run.cursor = Math.max(run.cursor, event.id);
      // A Set's iteration takes deletions in its stride (a follower removed below is simply not visited again).
      for (const follower of run.followers) {
        if (event.id <= follower.last) continue;
        follower.last = event.id;
        if (TERMINAL_EVENTS.has(event.event)) this.remove(runId, follower);
        follower.deliver(event);
      }
    }
  }

  private remove(runId: string, follower: TailFollower): void {
    const run = this.runs.get(runId);
    if (!run) return;
    run.followers.delete(follower);
    if (run.followers.size === 0) {
      this.runs.delete(runId);
      this.byKey.delete(run.key);
    }
  }

  /** Makes a blocked read return, so the next one includes the streams added since. */
  private wake(): void {
    if (!this.reading || !this.writer.isReady) return;
    void withTimeout(
      this.writer
        .multi()
        .xAdd(this.wakeKey, '*', { wake: '1' }, { TRIM: { strategy: 'MAXLEN', threshold: 10 } })
        .expire(this.wakeKey, 60)
        .exec(),
      this.commandTimeoutMs,
      () => new Error(`Redis did not answer within ${this.commandTimeoutMs} ms`),
    ).catch((error: Error) => this.warn(error));
  }

  private async readLoop(): Promise<void> {
    this.reading = true;
    try {
      while (!this.closed && this.runs.size > 0) {
        const streams = [...this.runs.values()].map((run) => ({ key: run.key, id: `${run.cursor}-0` }));
        streams.push({ key: this.wakeKey, id: this.lastWake });
        let reply: Awaited<ReturnType<RedisClient['xRead']>>;
        try {
          if (!this.reader.isReady) throw new Error('Redis is not connected');
          reply = await withTimeout(
            this.reader.xRead(streams, { BLOCK: BLOCK_MS, COUNT: READ_COUNT }),
            BLOCK_MS + this.commandTimeoutMs,
            () => new Error(`Redis did not answer within ${BLOCK_MS + this.commandTimeoutMs} ms`),
          );
          this.readable = true;
        } catch (error) {
          if (this.closed) return;
          this.readable = false;
          this.warn(error as Error);
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
          continue;
        }
        for (const stream of (reply ?? []) as Array<{ name: string; messages: Array<{ id: string; message: Record<string, string> }> }>) {
          if (stream.name === this.wakeKey) {
            this.lastWake = stream.messages.at(-1)?.id ?? this.lastWake;
            continue;
          }
          const runId = this.byKey.get(stream.name)?.runId;
          if (!runId) continue;
          const events = stream.messages.flatMap((entry) => {
            try {
              return [parseRunEvent(entry.message.payload)];
            } catch {
              this.logger.warn(`unreadable event ${entry.id} in ${stream.name}`);
              return [];
            }
          });
          this.deliver(runId, events);
        }
      }
    } finally {
      this.reading = false;
      // A follower added while the loop was ending starts it again.
      if (!this.closed && this.runs.size > 0) void this.readLoop();
    }
  }
}
