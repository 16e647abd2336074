/**
 * Followers of a run on another instance than the run's: Redis commands per
 * second while the run streams, and how long an event takes from `publish`
 * on the running instance to a follower's listener (p50/p99), for the shared
 * XREAD BLOCK tail (RunEventsService.follow) against per-follower polling
 * (XRANGE every 100 ms, what follow() did before), in the same run, on a
 * redis-server of the bench's own (so its command counts are the bench's
 * alone). Followers are in-process listeners of the following instance's
 * RunEventsService: the Redis side is what an SSE follower costs; the HTTP
 * side of 1 000 SSE connections is not measured here.
 *
 *   npm run bench:followers     (FOLLOWERS=1000, TOKENS=200, TOKEN_INTERVAL_MS=10)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { loadConfig } from '../src/config/app-config.js';
import { RunEventsService, runEventsKey } from '../src/chat/run-events.service.js';
import type { RunEvent } from '../src/chat/sse.js';
import { percentile, startRedisServer } from './support.js';

const FOLLOWERS = Number(process.env.FOLLOWERS ?? 1000);
const TOKENS = Number(process.env.TOKENS ?? 200);
const TOKEN_INTERVAL_MS = Number(process.env.TOKEN_INTERVAL_MS ?? 10);
const POLL_MS = 100;

async function service(url: string): Promise<RunEventsService> {
  const events = new RunEventsService(loadConfig({ NODE_ENV: 'test', REDIS_URL: url, LOG_LEVEL: 'silent' }));
  events.onModuleInit();
  const redis = (events as unknown as { redis: { isReady: boolean } }).redis;
  while (!redis.isReady) await new Promise((resolve) => setTimeout(resolve, 10));
  return events;
}

type Stats = { commandsPerSecond: number; lagP50: number; lagP99: number; seconds: number; delivered: number };

/** Streams a run of TOKENS tokens while `follow` has attached FOLLOWERS followers; lag from each event's publish time. */
async function measure(
  url: string,
  follow: (runId: string, onEvent: (event: RunEvent) => void) => Promise<() => void>,
): Promise<Stats> {
  const running = await service(url);
  const admin = createClient({ url });
  await admin.connect();
  const runId = randomUUID();
  const publishedAt = new Map<number, number>();
  const lags: number[] = [];
  let finished = 0;
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  running.open(runId);
  running.publish(runId, 'metadata', { run_id: runId });
  await running.flushed(runId);
  const stops: Array<() => void> = [];
  for (let i = 0; i < FOLLOWERS; i += 1) {
    stops.push(
      await follow(runId, (event) => {
        const sent = publishedAt.get(event.id);
        if (sent !== undefined) lags.push(performance.now() - sent);
        if (event.event === 'done' && ++finished === FOLLOWERS) allDone();
      }),
    );
  }
  await admin.sendCommand(['CONFIG', 'RESETSTAT']);
  const started = performance.now();
  for (let i = 0; i < TOKENS; i += 1) {
    publishedAt.set(i + 2, performance.now());
    running.publish(runId, 'token', { text: `t${i} ` });
    await new Promise((resolve) => setTimeout(resolve, TOKEN_INTERVAL_MS));
  }
  publishedAt.set(TOKENS + 2, performance.now());
  running.publish(runId, 'done', { response: 'all' });
  await done;
  const seconds = (performance.now() - started) / 1000;
  const info = String(await admin.sendCommand(['INFO', 'commandstats']));
  const calls = [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)]
    .filter(([, name]) => !['config', 'info'].includes(name))
    .reduce((sum, [, , n]) => sum + Number(n), 0);
  for (const stop of stops) stop();
  await running.onApplicationShutdown();
  await admin.quit();
  return { commandsPerSecond: calls / seconds, lagP50: percentile(lags, 50), lagP99: percentile(lags, 99), seconds, delivered: lags.length };
}

/** What follow() did before the shared tail: every follower reads the stream with XRANGE every 100 ms. */
function pollingFollower(reader: { xRange(key: string, start: string, end: string, options: { COUNT: number }): Promise<Array<{ message: Record<string, unknown> }>> }) {
  return async (runId: string, onEvent: (event: RunEvent) => void): Promise<() => void> => {
    let last = 0;
    let stopped = false;
    void (async () => {
      while (!stopped) {
        const entries = await reader.xRange(runEventsKey(runId), `(${last}-0`, '+', { COUNT: 500 });
        for (const entry of entries) {
          const event = JSON.parse(entry.message.payload as string) as RunEvent;
          last = event.id;
          onEvent(event);
          if (event.event === 'done') stopped = true;
        }
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    })();
    return () => (stopped = true);
  };
}

async function main(): Promise<void> {
  const redis = await startRedisServer();
  try {
    const following = await service(redis.url);
    const tail = await measure(redis.url, (runId, onEvent) => following.follow(runId, 0, onEvent, async () => 'running'));
    await following.onApplicationShutdown();

    const reader = createClient({ url: redis.url });
    await reader.connect();
    const polling = await measure(redis.url, pollingFollower(reader as unknown as Parameters<typeof pollingFollower>[0]));
    await reader.quit();

    const row = (name: string, s: Stats) =>
      `${name.padEnd(34)} ${s.commandsPerSecond.toFixed(0).padStart(8)} cmd/s   lag p50 ${s.lagP50.toFixed(2).padStart(7)} ms   p99 ${s.lagP99.toFixed(2).padStart(7)} ms   (${s.delivered} deliveries in ${s.seconds.toFixed(1)} s)`;
    console.log(`${FOLLOWERS} followers on another instance, ${TOKENS} tokens every ${TOKEN_INTERVAL_MS} ms, own redis-server`);
    console.log(row('shared XREAD BLOCK tail (follow)', tail));
    console.log(row('per-follower XRANGE poll, 100 ms', polling));
    console.log(`Redis commands: tail / poll = ${(tail.commandsPerSecond / polling.commandsPerSecond).toFixed(3)}`);
  } finally {
    redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
