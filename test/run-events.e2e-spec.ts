import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { loadConfig } from '../src/config/app-config.js';
import type { RunEvent } from '../src/chat/run-event.js';
import type { RunEventStream } from '../src/chat/run-event-stream.js';
import { RunEventsService, runEventsKey } from '../src/chat/run-events.service.js';
import { OwnRedis } from './support/own-redis.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { waitUntil } from './support/service-process.js';
import { TEST_REDIS_URL, testDatabaseUrl } from './support/test-env.js';

/** A RunEventsService on its own, connected to Redis at `redisUrl`. */
async function connectedRunEvents(redisUrl: string, commandTimeoutMs = '200'): Promise<RunEventsService> {
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: testDatabaseUrl(), REDIS_URL: redisUrl, CACHE_COMMAND_TIMEOUT_MS: commandTimeoutMs });
  const events = new RunEventsService(config);
  events.onModuleInit();
  await redisReady(events);
  return events;
}

function redisReady(events: RunEventsService): Promise<void> {
  return waitUntil(async () => (events as unknown as { store: { redis: { isReady: boolean } } }).store.redis.isReady, 'Redis connected', 10000, 10);
}

/** Reads a followed run's stream to its end (its terminal event): every event received, in order. */
async function readToEnd(stream: RunEventStream): Promise<RunEvent[]> {
  const received: RunEvent[] = [];
  for await (const event of stream) received.push(event);
  return received;
}

describe("A run's events in Redis", () => {
  it('are written in batches: the events published while a write is on its way go in one round trip, in order', async () => {
    const redis = await new OwnRedis().start(); // its own server: the command counts are this test's alone
    const events = await connectedRunEvents(redis.url());
    const reader = createClient({ url: redis.url() });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    try {
      await reader.sendCommand(['CONFIG', 'RESETSTAT']);
      events.open(runId);
      // 300 tokens in one tick, as a fast model's stream arrives: one MULTI … EXEC, not 300.
      events.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      for (let i = 0; i < 298; i += 1) events.publish(runId, 'token', { text: `t${i} ` });
      events.publish(runId, 'done', { response: 'all', session_id: sessionId });
      await events.flushed(runId);
      const stats = String(await reader.sendCommand(['INFO', 'commandstats']));
      const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      expect(calls('exec')).toBe(1);
      expect(calls('xadd')).toBe(300);
      const stored = await reader.xRange(runEventsKey(runId), '-', '+');
      expect(stored.map((entry) => entry.id)).toEqual(Array.from({ length: 300 }, (_, i) => `${i + 1}-0`));
      expect(stored.map((entry) => JSON.parse(entry.message.payload as string).event).at(-1)).toBe('done');
      expect(await reader.ttl(runEventsKey(runId))).toBeGreaterThan(0);
    } finally {
      await events.onApplicationShutdown();
      await reader.quit();
      await redis.stop();
    }
  });

  it('are followed from another instance by one blocking read for all its followers, not a poll each', async () => {
    const redis = await new OwnRedis().start();
    const running = await connectedRunEvents(redis.url()); // the instance running the turn
    const following = await connectedRunEvents(redis.url()); // the instance its clients rejoined
    const reader = createClient({ url: redis.url() });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    const followers = 50;
    try {
      running.open(runId);
      running.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      await running.flushed(runId);
      const reading: Array<Promise<RunEvent[]>> = [];
      for (let i = 0; i < followers; i += 1) {
        // Each follower's stream is read in a task of its own from the moment it is followed.
        reading.push(readToEnd(await following.follow(runId, 0, { status: async () => 'running' })));
      }
      // Every follower caught up; from now on only the live tail is read.
      await reader.sendCommand(['CONFIG', 'RESETSTAT']);
      for (let i = 0; i < 10; i += 1) running.publish(runId, 'token', { text: `t${i}` });
      running.publish(runId, 'done', { response: 'all', session_id: sessionId });
      const received = await Promise.all(reading);
      const stats = String(await reader.sendCommand(['INFO', 'commandstats']));
      const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      expect(calls('xrange')).toBe(0);
      expect(calls('xread')).toBeLessThanOrEqual(3);
      for (const events of received) {
        expect(events.map((event) => event.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(events.at(-1)?.event).toBe('done');
      }
    } finally {
      await running.onApplicationShutdown();
      await following.onApplicationShutdown();
      await reader.quit();
      await redis.stop();
    }
  });

  it('are caught up by 1 000 followers attaching at once with one shared, paged read: none refused, every one complete and in order', async () => {
    const redis = await new OwnRedis().start(); // its own server: the command counts are this test's alone
    const running = await connectedRunEvents(redis.url());
    const following = await connectedRunEvents(redis.url()); // the instance the clients rejoined
    const reader = createClient({ url: redis.url() });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    const followers = 1000;
    const before = 1200; // events already in Redis when the storm arrives: more than one page
    let status: 'running' | 'done' = 'running';
    try {
      running.open(runId);
      running.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      for (let i = 1; i < before; i += 1) running.publish(runId, 'token', { text: `t${i} ` });
      await running.flushed(runId);
      await reader.sendCommand(['CONFIG', 'RESETSTAT']);
      // Every client rejoins in the same moment, each from the start or from where its stream broke off; each stream is
      // read in a task of its own from the moment it is attached.
      const attached = await Promise.allSettled(
        Array.from({ length: followers }, (_, i) =>
          following.follow(runId, i % 4 === 0 ? 0 : i % before, { status: async () => status }).then((stream) => ({ reading: readToEnd(stream) })),
        ),
      );
      const refused = attached.filter((result) => result.status === 'rejected');
      expect(refused.map((result) => (result as PromiseRejectedResult).reason?.code)).toEqual([]);
      const stats = String(await reader.sendCommand(['INFO', 'commandstats']));
      const xranges = Number(/cmdstat_xrange:calls=(\d+)/.exec(stats)?.[1] ?? 0);
      // One catch-up for the storm, page by page (a few pages), not one read per follower.
      expect(xranges).toBeLessThanOrEqual(10);
      for (let i = 0; i < 100; i += 1) running.publish(runId, 'token', { text: `late${i} ` });
      running.publish(runId, 'done', { response: 'all', session_id: sessionId });
      status = 'done';
      const received = await Promise.all(attached.map((result) => (result as PromiseFulfilledResult<{ reading: Promise<RunEvent[]> }>).value.reading));
      const total = before + 101;
      received.forEach((events, i) => {
        const from = i % 4 === 0 ? 0 : i % before;
        expect(events.map((event) => event.id)).toEqual(Array.from({ length: total - from }, (_, k) => from + k + 1));
        expect(events.at(-1)?.event).toBe('done');
      });
    } finally {
      await running.onApplicationShutdown();
      await following.onApplicationShutdown();
      await reader.quit();
      await redis.stop();
    }
  }, 120000);

  it('send a catch-up read that does not answer in time again, and take the answer that comes, within the budget, instead of a 503', async () => {
    const redisUrl = new URL(TEST_REDIS_URL);
    const link = await new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379)).start();
    const running = await connectedRunEvents(TEST_REDIS_URL);
    const following = await connectedRunEvents(`redis://127.0.0.1:${link.port}${redisUrl.pathname}`);
    const reader = createClient({ url: TEST_REDIS_URL });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    try {
      running.open(runId);
      running.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      running.publish(runId, 'token', { text: 'a' });
      running.publish(runId, 'done', { response: 'a', session_id: sessionId });
      await running.flushed(runId);
      // The link holds the first read past the command timeout (200 ms): the follower asks again.
      link.hold();
      const attached = following.follow(runId, 0, { status: async () => 'done' });
      const outcome = await Promise.race([
        link.waitForHeld(2).then(() => 'read sent again' as const),
        attached.then(
          () => 'attached' as const,
          (error: { code?: string }) => `refused: ${error.code}`,
        ),
      ]);
      expect(outcome).toBe('read sent again');
      link.release();
      const received = await readToEnd(await attached);
      expect(received.map((event) => event.event)).toEqual(['metadata', 'token', 'done']);
    } finally {
      link.release();
      await running.onApplicationShutdown();
      await following.onApplicationShutdown();
      await reader.del(runEventsKey(runId));
      await reader.quit();
      await link.stop();
    }
  }, 30000);

  it('treat a retried write that had landed after all as written, and go on', async () => {
    const events = await connectedRunEvents(TEST_REDIS_URL);
    const reader = createClient({ url: TEST_REDIS_URL });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    try {
      events.open(runId);
      events.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      await events.flushed(runId);
      // The next event already reached Redis by an attempt whose reply was lost.
      await reader.xAdd(runEventsKey(runId), '2-0', { payload: JSON.stringify({ id: 2, event: 'token', data: { text: 'a' } }) });
      events.publish(runId, 'token', { text: 'a' });
      events.publish(runId, 'done', { response: 'a', session_id: sessionId });
      await events.flushed(runId);
      const stored = await reader.xRange(runEventsKey(runId), '-', '+');
      expect(stored.map((entry) => JSON.parse(entry.message.payload as string).event)).toEqual(['metadata', 'token', 'done']);
    } finally {
      await events.onApplicationShutdown();
      await reader.del(runEventsKey(runId));
      await reader.quit();
    }
  }, 30000);

  it('are a complete prefix when a write fails: later events are not written after a gap', async () => {
    const redisUrl = new URL(TEST_REDIS_URL);
    const link = await new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379)).start();
    const events = await connectedRunEvents(`redis://127.0.0.1:${link.port}${redisUrl.pathname}`, '100');
    const reader = createClient({ url: TEST_REDIS_URL });
    await reader.connect();
    const runId = randomUUID();
    const sessionId = randomUUID();
    try {
      events.open(runId);
      events.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
      await events.flushed(runId);
      link.setMode('refuse'); // the connection drops; writes fail until it is back
      events.publish(runId, 'token', { text: 'lost' });
      await events.flushed(runId);
      link.setMode('forward');
      await redisReady(events);
      events.publish(runId, 'token', { text: 'after the outage' });
      events.publish(runId, 'done', { response: 'x', session_id: sessionId });
      await events.flushed(runId);
      const stored = await reader.xRange(runEventsKey(runId), '-', '+');
      const ids = stored.map((entry) => JSON.parse(entry.message.payload as string).id as number);
      expect(ids).toEqual(ids.map((_, i) => i + 1)); // 1..n: no gap
      expect(ids.length).toBeGreaterThanOrEqual(1);
    } finally {
      await events.onApplicationShutdown();
      await reader.del(runEventsKey(runId));
      await reader.quit();
      await link.stop();
    }
  }, 30000);
  it('stop a follower at a gap in the stream (writes a failover lost) with events_incomplete, in the catch-up and in the live tail', async () => {
    const following = await connectedRunEvents(TEST_REDIS_URL);
    const writer = createClient({ url: TEST_REDIS_URL });
    await writer.connect();
    const runId = randomUUID();
    const key = runEventsKey(runId);
    const entry = (id: number, event: string, data: Record<string, unknown>) => ({ payload: JSON.stringify({ id, event, data }) });
    try {
      // What a new master holds after a failover that lost events 3 and 4, the run's instance writing on from 5.
      for (const id of [1, 2]) await writer.xAdd(key, `${id}-0`, entry(id, 'token', { text: `t${id}` }));
      await writer.xAdd(key, '5-0', entry(5, 'token', { text: 't5' }));
      const caughtUp = await readToEnd(await following.follow(runId, 0, { status: async () => 'running' }));
      expect(caughtUp.map((event) => [event.id, event.event])).toEqual([
        [1, 'token'],
        [2, 'token'],
        [3, 'error'],
      ]);
      expect(caughtUp[2].data).toMatchObject({ code: 'events_incomplete' });

      // The same gap arriving through the live tail, after the follower caught up.
      const tailRun = randomUUID();
      const tailKey = runEventsKey(tailRun);
      await writer.xAdd(tailKey, '1-0', entry(1, 'token', { text: 'a' }));
      const stream = await following.follow(tailRun, 0, { status: async () => 'running' });
      const reading = readToEnd(stream);
      await writer.xAdd(tailKey, '2-0', entry(2, 'token', { text: 'b' }));
      await writer.xAdd(tailKey, '4-0', entry(4, 'done', { response: 'ab?', session_id: randomUUID() }));
      const tailed = await reading;
      expect(tailed.map((event) => [event.id, event.event])).toEqual([
        [1, 'token'],
        [2, 'token'],
        [3, 'error'],
      ]);
      expect(tailed[2].data).toMatchObject({ code: 'events_incomplete' });
      await writer.del([key, tailKey]);
    } finally {
      await following.onApplicationShutdown();
      await writer.quit();
    }
  });
});
