import keySlot from 'cluster-key-slot';

/**
 * A user's hash tag, `{u<base64url of the id>}`: a user id is chosen by the
 * identity provider and may hold braces, which would make the key's slot
 * another than the one the client computes (Redis hashes the whole key when
 * `{}` is empty; cluster-key-slot reads on). The encoding has none, and two
 * users never share one.
 */
export function userHashTag(userId: string): string {
  return `{u${Buffer.from(userId, 'utf8').toString('base64url')}}`;
}

/** Hash slots of a Redis Cluster. */
const SLOTS = 16384;

/**
 * The first tag (`rs0`, `rs1`, …) whose slot lies in the shard's share of the
 * slots: with as many shards as masters and the slots split evenly (what
 * `redis-cli --cluster create` does), each master serves one shard.
 */
function shardTag(shard: number, shards: number): string {
  const from = Math.floor((shard * SLOTS) / shards);
  const to = Math.floor(((shard + 1) * SLOTS) / shards);
  for (let candidate = 0; ; candidate += 1) {
    const tag = `rs${candidate}`;
    const slot = keySlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}

/**
 * The names of the service's Redis keys and channels. On a Redis Cluster,
 * keys used together share a hash tag, so no command crosses slots: a run's
 * event stream, the tail's wake stream and the cancel channel carry one of
 * REDIS_CLUSTER_RUN_SHARDS shard tags (chosen from the run id's own slot), so
 * one blocking XREAD per shard reads every stream an instance follows there.
 * On one Redis (or Sentinel) every run is in shard 0 and the names are the
 * untagged ones.
 */
export class RedisKeys {
  /** How many groups run streams fall into; the live tail keeps one blocking read per group. */
  readonly runShards: number;
  private readonly tags: string[] | null;

  constructor(redis: { cluster: { runShards: number } | null }) {
    this.runShards = redis.cluster?.runShards ?? 1;
    this.tags = redis.cluster ? Array.from({ length: this.runShards }, (_, shard) => shardTag(shard, this.runShards)) : null;
  }

  /** The shard of a run: where its stream, and the channel that cancels it, live. */
  runShard(runId: string): number {
    return this.tags ? Math.floor((keySlot(runId) * this.runShards) / SLOTS) : 0;
  }

  /** A run's event stream. */
  runEvents(runId: string): string {
    return this.tags ? `chat_run_events:{${this.tags[this.runShard(runId)]}}:${runId}` : `chat_run_events:${runId}`;
  }

  /** The stream an instance's tail adds to, to wake its blocked read of `shard`. */
  tailWake(shard: number, instance: string): string {
    return this.tags ? `chat_run_events_wake:{${this.tags[shard]}}:${instance}` : `chat_run_events_wake:${instance}`;
  }

  /** The channel a cancel of a run in `shard` is published on (sharded pub/sub on a cluster). */
  runCancel(shard: number): string {
    return this.tags ? `chat_run_cancel:{${this.tags[shard]}}` : 'chat_run_cancel';
  }

  /** BullMQ's key prefix: a hash tag on a cluster, since its scripts touch several keys of a queue at once. */
  get queuePrefix(): string {
    return this.tags ? '{rag}' : 'rag';
  }
}
