import { randomUUID } from 'node:crypto';
import keySlot from 'cluster-key-slot';
import { RedisKeys, userHashTag } from './redis-keys.js';

/** The slot a key is stored in: its hash tag's, when it has one. */
const slotOf = (key: string) => keySlot(key);

describe('RedisKeys', () => {
  it('keeps the untagged names on one Redis, every run in one shard', () => {
    const keys = new RedisKeys({ cluster: null });
    const runId = randomUUID();
    expect(keys.runShards).toBe(1);
    expect(keys.runShard(runId)).toBe(0);
    expect(keys.runEvents(runId)).toBe(`chat_run_events:${runId}`);
    expect(keys.tailWake(0, 'i')).toBe('chat_run_events_wake:i');
    expect(keys.runCancel(0)).toBe('chat_run_cancel');
    expect(keys.queuePrefix).toBe('rag');
  });

  it.each([1, 2, 3, 4, 6, 16])('on a cluster of %i run shards: a tag per shard inside its share of the slots, and a run’s keys on one slot', (shards) => {
    const keys = new RedisKeys({ cluster: { runShards: shards } });
    const tagSlots = Array.from({ length: shards }, (_, shard) => slotOf(keys.runCancel(shard)));
    tagSlots.forEach((slot, shard) => {
      expect(slot).toBeGreaterThanOrEqual(Math.floor((shard * 16384) / shards));
      expect(slot).toBeLessThan(Math.floor(((shard + 1) * 16384) / shards));
    });
    const seen = new Set<number>();
    for (let i = 0; i < 400; i += 1) {
      const runId = randomUUID();
      const shard = keys.runShard(runId);
      seen.add(shard);
      expect(keys.runEvents(runId)).toMatch(new RegExp(`^chat_run_events:\\{rs\\d+\\}:${runId}$`));
      expect(slotOf(keys.runEvents(runId))).toBe(tagSlots[shard]);
      expect(slotOf(keys.tailWake(shard, randomUUID()))).toBe(tagSlots[shard]);
    }
    // Run ids spread over every shard.
    expect(seen.size).toBe(shards);
    expect(keys.queuePrefix).toBe('{rag}');
  });

  it('names the same keys on every instance (they depend on the shard count alone)', () => {
    const runId = randomUUID();
    expect(new RedisKeys({ cluster: { runShards: 3 } }).runEvents(runId)).toBe(new RedisKeys({ cluster: { runShards: 3 } }).runEvents(runId));
  });

  it.each(['alice', '}evil', '{}x}', '{a}', '用户-١٢٣', '\u202Eright-to-left', 'x'.repeat(128)])('gives the user %j a tag of its own, with no brace inside', (userId) => {
    const tag = userHashTag(userId);
    expect(tag).toMatch(/^\{u[A-Za-z0-9_-]+\}$/);
    expect(Buffer.from(tag.slice(2, -1), 'base64url').toString('utf8')).toBe(userId);
    // Keys that carry it are on the tag's slot, whatever follows.
    expect(slotOf(`chat_messages:${tag}:{}}{`)).toBe(slotOf(`chat_sessions:${tag}`));
  });
});
