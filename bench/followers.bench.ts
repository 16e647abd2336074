/**
 * Followers of a run on another instance than the run's, in two parts.
 *
 * 1. In process: Redis commands per second while the run streams, and how
 *    long an event takes from `publish` on the running instance to a
 *    follower reading it (p50/p99), for the shared XREAD BLOCK tail
 *    (RunEventsService.follow) against per-follower polling (XRANGE every
 *    100 ms, what follow() did before), in the same run, on a redis-server of
 *    the bench's own (so its command counts are the bench's alone).
 * 2. A reconnect storm over HTTP: two built instances (`node dist/main.js`)
 *    on a throw-away database and the bench's redis-server; a streamed turn
 *    runs on the first, then STORM_FOLLOWERS clients rejoin it at once on the
 *    second (GET /api/chat/runs/:run_id/stream, from the start), from
 *    CLIENT_PROCESSES child processes each holding its share of the SSE
 *    connections. Reports attach-to-complete p50/p95/p99 (request sent to
 *    terminal event read), 503s and other failures, incomplete streams, the
 *    XRANGE calls the storm cost Redis, and the ratio of the storm's p50 to
 *    a lone client's (the baseline: BASELINE_REJOINS rejoins one at a time).
 * 3. Live followers over HTTP: the same two instances, with a paced
 *    OpenAI-compatible model of the bench's own (LIVE_TOKENS tokens, one
 *    every TOKEN_INTERVAL_MS). A streamed turn starts on the first instance
 *    and holds its answer until LIVE_FOLLOWERS clients (each count of the
 *    list in turn), from CLIENT_PROCESSES child processes (LIVE_CLIENTS: C
 *    or Node), follow it on the second and have its first events. Then the
 *    tokens flow; each token's lag
 *    is its arrival at a follower minus its arrival at the turn's own client
 *    on the first instance (one clock: the machine's). A first turn with
 *    LIVE_WARMUP_FOLLOWERS followers warms the fresh instances up and is
 *    printed as such, not as a result. Reports the `token`
 *    events' lag p50/p95/p99 (the terminal event, which also ends every
 *    follower's response, apart), the following instance's CPU per delivery,
 *    and the Redis commands per second while the tokens flowed; then where
 *    late tokens come from: the tokens late for most of their followers at
 *    once, the following instance's event-loop delay and GC time over the
 *    flow and the running instance's event-loop delay (their /metrics), and
 *    the machine's CPU busy and steal (/proc/stat).
 *
 *
 * With REDIS_CLUSTER_MASTERS=n (3, say), parts 2 and 3 run against a Redis
 * Cluster of n masters of the bench's own (REDIS_CLUSTER_NODES, as many run
 * shards as masters) instead of one redis-server, and Redis's figures are
 * the sums over its nodes; part 1 needs one Redis and is skipped.
 *
 *   npm run bench:followers     (FOLLOWERS=1000, TOKENS=200, TOKEN_INTERVAL_MS=10; STORM_FOLLOWERS=1000,
 *                                CLIENT_PROCESSES=4, STORMS=3, BASELINE_REJOINS=20; LIVE_FOLLOWERS=100,1000, LIVE_TOKENS=200, LIVE_WARMUP_FOLLOWERS=100;
 *                                PARTS=tail,storm,live; REDIS_CLUSTER_MASTERS=0; LIVE_CLIENTS=native|node; PROBE_REDIS=1 times each token's arrival in Redis;
 *                                SKIP_NEST_BUILD=true to use the dist/ already built;
 *                                PROFILE_DIR=<dir> writes the following instance's CPU profile there)
 */
import 'reflect-metadata';
import { ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@keyv/redis';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../src/config/app-config.js';
import { RunEventsService, runEventsKey } from '../src/chat/run-events.service.js';
import type { RunEvent } from '../src/chat/sse.js';
import { OwnRedisCluster } from '../test/support/own-redis-cluster.js';
import { redisCommand } from '../test/support/redis-node-process.js';
import { ROOT, buildService, startInstance, startRedis, stopChild } from './service-instances.js';
import { createBenchDatabase, percentile } from './support.js';

const FOLLOWERS = Number(process.env.FOLLOWERS ?? 1000);
const TOKENS = Number(process.env.TOKENS ?? 200);
const TOKEN_INTERVAL_MS = Number(process.env.TOKEN_INTERVAL_MS ?? 10);
const POLL_MS = 100;
const STORM_FOLLOWERS = Number(process.env.STORM_FOLLOWERS ?? 1000);
const CLIENT_PROCESSES = Number(process.env.CLIENT_PROCESSES ?? 4);
const STORMS = Number(process.env.STORMS ?? 3);
const BASELINE_REJOINS = Number(process.env.BASELINE_REJOINS ?? 20);
const LIVE_FOLLOWERS = (process.env.LIVE_FOLLOWERS ?? '100,1000').split(',').map(Number);
const LIVE_TOKENS = Number(process.env.LIVE_TOKENS ?? 200);
/** Followers of an unmeasured first turn: fresh instances run their first streamed tokens before the JIT compiled the paths (0: none). */
const LIVE_WARMUP_FOLLOWERS = Number(process.env.LIVE_WARMUP_FOLLOWERS ?? 100);
const PARTS = new Set((process.env.PARTS ?? 'tail,storm,live').split(',').map((part) => part.trim()));
const REDIS_CLUSTER_MASTERS = Number(process.env.REDIS_CLUSTER_MASTERS ?? 0);
/** PROBE_REDIS=1 (one redis-server): the bench reads the live run's stream as well, timing each token's arrival in Redis (adds its reads to Redis's counts). */
const PROBE_REDIS = process.env.PROBE_REDIS === '1' && REDIS_CLUSTER_MASTERS === 0;
/**
 * LIVE_CLIENTS: what part 3's followers are. `native` (the default on Linux): bench/native/sse-followers.c, one epoll
 * thread per process, built with `cc` at the start; `node`: Node processes (`clientProcess`). The clients share the
 * machine's cores with the instance they measure, and the native ones take about two thirds of the Node ones' CPU.
 */
const LIVE_CLIENTS = (process.env.LIVE_CLIENTS ?? (process.platform === 'linux' ? 'native' : 'node')) === 'native' ? 'native' : 'node';

/** The Redis the instances run on: one redis-server, or a cluster; its command counters summed over its nodes. */
interface RedisTarget {
  /** For the report: what the instances ran on. */
  name: string;
  /** REDIS_URL, and the instances' other Redis variables. */
  url: string;
  env: Record<string, string>;
  resetStats(): Promise<void>;
  /** INFO commandstats of every node, concatenated. */
  commandStats(): Promise<string>;
}

function oneRedis(url: string): RedisTarget {
  const port = Number(new URL(url).port);
  return {
    name: 'own redis-server',
    url,
    env: {},
    resetStats: async () => void (await redisCommand(port, ['CONFIG', 'RESETSTAT'])),
    commandStats: async () => String(await redisCommand(port, ['INFO', 'commandstats'])),
  };
}

function clusterRedis(cluster: OwnRedisCluster): RedisTarget {
  const each = (args: string[]) => Promise.all(cluster.nodes.map((node) => redisCommand(node.port, args)));
  return {
    name: `own Redis Cluster of ${cluster.nodes.length} masters`,
    // Only the nodes' login: the cluster is discovered from REDIS_CLUSTER_NODES.
    url: `redis://127.0.0.1:${cluster.nodes[0].port}`,
    env: { REDIS_CLUSTER_NODES: cluster.addresses, REDIS_CLUSTER_RUN_SHARDS: String(cluster.nodes.length) },
    resetStats: async () => void (await each(['CONFIG', 'RESETSTAT'])),
    commandStats: async () => (await each(['INFO', 'commandstats'])).map(String).join('\n'),
  };
}

/** Calls of one command over every node of `stats` (INFO commandstats). */
function callsOf(stats: string, command: string): number {
  return [...stats.matchAll(new RegExp(`cmdstat_${command}:calls=(\\d+)`, 'g'))].reduce((sum, match) => sum + Number(match[1]), 0);
}
const JWT_SECRET = 'bench-followers-secret-not-for-production';

async function service(url: string): Promise<RunEventsService> {
  const events = new RunEventsService(loadConfig({ NODE_ENV: 'test', REDIS_URL: url, LOG_LEVEL: 'silent' }));
  events.onModuleInit();
  const redis = (events as unknown as { redis: { isReady: boolean } }).redis;
  while (!redis.isReady) await new Promise((resolve) => setTimeout(resolve, 10));
  return events;
}

type Stats = { commandsPerSecond: number; lagP50: number; lagP99: number; seconds: number; delivered: number };

/** Streams a run of TOKENS tokens while `follow` has attached FOLLOWERS followers; lag from each event's publish time. */
async function measure(url: string, follow: (runId: string, onEvent: (event: RunEvent) => void) => Promise<() => void>): Promise<Stats> {
  const running = await service(url);
  const admin = createClient({ url });
  await admin.connect();
  const runId = randomUUID();
  const publishedAt = new Map<number, number>();
  const lags: number[] = [];
  let finished = 0;
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  const sessionId = randomUUID();
  running.open(runId);
  running.publish(runId, 'metadata', { run_id: runId, session_id: sessionId });
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
  running.publish(runId, 'done', { response: 'all', session_id: sessionId });
  await done;
  const seconds = (performance.now() - started) / 1000;
  const info = String(await admin.sendCommand(['INFO', 'commandstats']));
  const calls = [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].filter(([, name]) => !['config', 'info'].includes(name)).reduce((sum, [, , n]) => sum + Number(n), 0);
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

/** One rejoin over HTTP, read to its terminal event: the time from sending it, and what it got. */
type Rejoin = { ms: number; status: number; code?: string; events: number; inOrder: boolean; terminal?: string };

function rejoin(base: string, token: string, runId: string): Promise<Rejoin> {
  const started = performance.now();
  return new Promise((resolve) => {
    const url = new URL(`${base}/api/chat/runs/${runId}/stream`);
    const req = http.get(
      { host: url.hostname, port: url.port, path: url.pathname, agent: false, headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } },
      (res) => {
        let buffer = '';
        let events = 0;
        let last = 0;
        let inOrder = true;
        let terminal: string | undefined;
        res.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const id = Number(/^id: (.*)$/m.exec(block)?.[1]);
            if (!event) continue; // a heartbeat
            events += 1;
            if (id !== last + 1) inOrder = false;
            last = id;
            if (event === 'done' || event === 'error') terminal = event;
          }
        });
        res.on('end', () => {
          const code = res.statusCode === 200 ? undefined : (/"code":"([^"]+)"/.exec(buffer)?.[1] ?? undefined);
          resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, code, events, inOrder, terminal });
        });
        res.on('error', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, code: 'connection_reset', events, inOrder, terminal }));
      },
    );
    req.on('error', (error) => resolve({ ms: performance.now() - started, status: 0, code: error.message, events: 0, inOrder: false }));
  });
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** The machine's CPU ticks since boot (/proc/stat's `cpu` line): busy, idle, and steal (taken by the hypervisor for other guests). */
function machineCpu(): { busy: number; idle: number; steal: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
}

/**
 * An instance's event-loop delay since its last scrape (prom-client's
 * monitorEventLoopDelay, which each scrape resets) and its GC pause time so
 * far, from its /metrics.
 */
async function loopAndGc(base: string): Promise<{ lagMaxMs: number; lagP99Ms: number; gcMs: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const seconds = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  const gc = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  return { lagMaxMs: seconds('nodejs_eventloop_lag_max_seconds') * 1000, lagP99Ms: seconds('nodejs_eventloop_lag_p99_seconds') * 1000, gcMs: gc * 1000 };
}

/** Reads a run's event stream as it grows (XREAD BLOCK, as a tail does): when each event id arrived in Redis, on the machine's clock. */
async function probeStream(url: string, key: string): Promise<{ arrivals: Map<number, number>; stop: () => Promise<void> }> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  const arrivals = new Map<number, number>();
  let stopped = false;
  let last = '0-0';
  const loop = (async () => {
    while (!stopped) {
      const reply = (await client.sendCommand(['XREAD', 'COUNT', '1000', 'BLOCK', '200', 'STREAMS', key, last]).catch(() => null)) as Array<
        [string, Array<[string, unknown]>]
      > | null;
      const now = clock();
      for (const [, entries] of reply ?? []) {
        for (const [id] of entries) {
          arrivals.set(Number(id.split('-')[0]), now);
          last = id;
        }
      }
    }
  })();
  return {
    arrivals,
    stop: async () => {
      stopped = true;
      await loop;
      client.destroy();
    },
  };
}

/** The machine's clock in ms, with sub-millisecond steps: the same in every process. */
const clock = () => performance.timeOrigin + performance.now();

/** Arrival times of a stream's events by id (`id:` lines), until its terminal event; `onFirst` once the first event arrived. */
function arrivals(res: http.IncomingMessage, onFirst: () => void, onBlock?: (block: string) => void): Promise<Array<[number, number]>> {
  return new Promise((resolve) => {
    const seen: Array<[number, number]> = [];
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = clock();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        onBlock?.(block);
        const id = /^id: (\d+)$/m.exec(block);
        if (!id) continue;
        seen.push([Number(id[1]), now]);
        if (seen.length === 1) onFirst();
      }
    });
    res.on('end', () => resolve(seen));
    res.on('error', () => resolve(seen));
  });
}

/**
 * A live follower: follows the run from its start on a plain TCP socket (an
 * HTTP/1.1 GET, the response's `id:` lines read as they come), as lean as a
 * client can be, so the client processes do not starve the instance they
 * measure of the machine's cores. Resolves `attached` at its first event, and
 * to every event's arrival time (at the socket's read) at the end.
 */
const READ_BUFFER = Buffer.alloc(64 * 1024);

function follow(base: string, token: string, runId: string, attached: () => void): Promise<Array<[number, number]>> {
  return new Promise((resolve) => {
    const url = new URL(`${base}/api/chat/runs/${runId}/stream`);
    const seen: Array<[number, number]> = [];
    let pending = '';
    let first = true;
    // Reads into one buffer of the process's own (no allocation, no stream machinery per read): see `onread`.
    const socket = net.connect(
      {
        port: Number(url.port),
        host: url.hostname,
        onread: {
          buffer: READ_BUFFER,
          callback: (size: number) => {
            read(READ_BUFFER.toString('latin1', 0, size));
            return true;
          },
        },
      },
      () => socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n`),
    );
    const read = (chunk: string) => {
      const now = clock();
      // Only whole events are read (an event's arrival is its end's, as for the turn's own client); the rest, from the
      // last event's end on, waits for the next chunk.
      const text = pending + chunk;
      const lastEnd = text.lastIndexOf('\n\n');
      pending = lastEnd < 0 ? text : text.slice(lastEnd + 1);
      for (let at = text.indexOf('\nid: '); at >= 0 && at < lastEnd; at = text.indexOf('\nid: ', at + 5)) {
        seen.push([Number(text.slice(at + 5, text.indexOf('\n', at + 5))), now]);
        if (first) {
          first = false;
          attached();
        }
      }
    };
    const end = () => {
      if (first) attached();
      first = false;
      resolve(seen);
    };
    socket.on('close', end);
    socket.on('error', () => undefined);
  });
}

/** Part 3's client processes: each follows the run `count` times and gives back every follower's arrivals. */
interface LiveClients {
  follow(base: string, token: string, runId: string, count: number): { attached: Promise<unknown>; done: Promise<Array<Array<[number, number]>>> };
  processes(): ChildProcess[];
  close(): void;
}

async function liveClients(script: string): Promise<LiveClients> {
  return LIVE_CLIENTS === 'native' ? nativeClients() : nodeClients(script);
}

/** CLIENT_PROCESSES forks of this script (`clientProcess`), started and ready before the turn. */
async function nodeClients(script: string): Promise<LiveClients> {
  const clients = Array.from({ length: CLIENT_PROCESSES }, () => fork(script, ['client'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await Promise.all(clients.map((client) => new Promise((resolve) => client.once('message', resolve))));
  let next = 0;
  return {
    follow: (base, token, runId, count) => {
      const client = clients[next++];
      const attached = new Promise((resolve) => client.once('message', resolve));
      const done = attached.then(() => new Promise<Array<Array<[number, number]>>>((resolve) => client.once('message', resolve)));
      client.send({ kind: 'live', base, token, runId, count } satisfies ClientMessage);
      return { attached, done };
    },
    processes: () => clients,
    close: () => clients.forEach((client) => client.disconnect()),
  };
}

let nativeBinary: string | undefined;

/**
 * `clock()` minus the monotonic clock (`process.hrtime`), in ms: from the
 * tightest of a few readings of `clock()` between two of `hrtime`, so a
 * pause between the readings cannot move every native stamp.
 */
function monotonicOffset(): number {
  let best = { spread: Infinity, offset: 0 };
  for (let i = 0; i < 20; i += 1) {
    const before = process.hrtime.bigint();
    const at = clock();
    const after = process.hrtime.bigint();
    const spread = Number(after - before);
    if (spread < best.spread) best = { spread, offset: at - Number(before + (after - before) / 2n) / 1e6 };
  }
  return best.offset;
}

/** bench/native/sse-followers.c, built once per bench run with `cc -O2`; one process per `follow`. */
function nativeClients(): LiveClients {
  if (!nativeBinary) {
    nativeBinary = path.join(ROOT, 'build', 'bench', 'sse-followers');
    const build = spawnSync('cc', ['-O2', '-Wall', '-o', nativeBinary, path.join(ROOT, 'bench', 'native', 'sse-followers.c')], { stdio: 'inherit' });
    if (build.status !== 0) {
      throw new Error(`cc failed to build bench/native/sse-followers.c (${build.status ?? build.error?.message}): install a C compiler (gcc), or run with LIVE_CLIENTS=node`);
    }
  }
  const spawned: ChildProcess[] = [];
  // The client stamps CLOCK_MONOTONIC, which is what process.hrtime reads: moved onto `clock()` here.
  const offsetMs = monotonicOffset();
  return {
    follow: (base, token, runId, count) => {
      const url = new URL(`${base}/api/chat/runs/${runId}/stream`);
      const child = spawn(nativeBinary!, [url.hostname, url.port, url.pathname, token, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
      spawned.push(child);
      let output = '';
      let announced: () => void;
      const attached = new Promise<void>((resolve) => (announced = resolve));
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        output += chunk;
        if (output.startsWith('attached\n')) announced();
      });
      const done = new Promise<Array<Array<[number, number]>>>((resolve, reject) =>
        child.on('close', (code) => {
          if (code !== 0) return reject(new Error(`sse-followers exited with ${code}`));
          announced();
          const lines = output.split('\n').slice(1, count + 1);
          // A follower whose response was not a 200 ("!<status>") read nothing: it counts as incomplete.
          resolve(
            lines.map((line) =>
              line && !line.startsWith('!')
                ? line.split(' ').map((pair) => {
                    const [id, ns] = pair.split(':');
                    return [Number(id), Number(ns) / 1e6 + offsetMs] as [number, number];
                  })
                : [],
            ),
          );
        }),
      );
      return { attached, done };
    },
    processes: () => spawned,
    close: () => spawned.forEach((child) => child.kill()),
  };
}

type ClientMessage = { kind: 'rejoin' | 'live'; base: string; token: string; runId: string; count: number };

/** A client process: opens its `count` rejoins (or live followers) at once and sends back what each got; live followers say `attached` first. */
function clientProcess(): void {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ClientMessage) => {
    if (message.kind === 'rejoin') {
      void Promise.all(Array.from({ length: message.count }, () => rejoin(message.base, message.token, message.runId))).then((results) => process.send!(results));
      return;
    }
    let attached = 0;
    const followers = Array.from({ length: message.count }, () =>
      follow(message.base, message.token, message.runId, () => ++attached === message.count && process.send!('attached')),
    );
    void Promise.all(followers).then((results) => process.send!(results));
  });
  process.send!('ready');
}

/** STORM_FOLLOWERS rejoins of `runId`, split over CLIENT_PROCESSES processes started beforehand and released together. */
async function storm(base: string, token: string, runId: string): Promise<Rejoin[]> {
  const script = fileURLToPath(import.meta.url);
  const clients = Array.from({ length: CLIENT_PROCESSES }, () => fork(script, ['client'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  try {
    await Promise.all(clients.map((client) => new Promise((resolve) => client.once('message', resolve))));
    const results = clients.map(
      (client, i) =>
        new Promise<Rejoin[]>((resolve) => {
          client.once('message', (rejoins: Rejoin[]) => resolve(rejoins));
          const count = Math.floor(STORM_FOLLOWERS / CLIENT_PROCESSES) + (i < STORM_FOLLOWERS % CLIENT_PROCESSES ? 1 : 0);
          client.send({ kind: 'rejoin', base, token, runId, count } satisfies ClientMessage);
        }),
    );
    return (await Promise.all(results)).flat();
  } finally {
    for (const client of clients) client.disconnect();
  }
}

async function stormOverHttp(redis: RedisTarget): Promise<void> {
  buildService();
  const database = await createBenchDatabase('bench_followers');
  const instances: Awaited<ReturnType<typeof startInstance>>[] = [];
  try {
    // One after the other: the first applies the migrations on the fresh database.
    instances.push(await startInstance(database.url, redis.url, JWT_SECRET, redis.env));
    instances.push(await startInstance(database.url, redis.url, JWT_SECRET, redis.env));
    const [running, following] = instances.map((instance) => `http://127.0.0.1:${instance.port}`);
    const token = jwt.sign({ sub: 'bench-followers-user', role: 'user' }, JWT_SECRET, { algorithm: 'HS256', expiresIn: '1h' });
    const turn = await fetch(`${running}/api/chat/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'How do I reset the Aurora X1 router? Tell me everything about its warranty too.' }),
    });
    const text = await turn.text();
    const runId = /"run_id":"([^"]+)"/.exec(text)![1];
    const events = (text.match(/^event: /gm) ?? []).length;
    const check = (r: Rejoin) => r.status === 200 && r.events === events && r.inOrder && r.terminal === 'done';
    // The baseline: the same rejoin, one client at a time (after a few untimed ones: JIT, pools).
    for (let i = 0; i < 5; i += 1) await rejoin(following, token, runId);
    const alone: Rejoin[] = [];
    for (let i = 0; i < BASELINE_REJOINS; i += 1) alone.push(await rejoin(following, token, runId));
    const baselineP50 = percentile(
      alone.map((r) => r.ms),
      50,
    );
    console.log(
      `\nreconnect storm over HTTP: a finished streamed turn of ${events} events on instance 1; ${STORM_FOLLOWERS} clients rejoin it at once on instance 2 ` +
        `(from ${CLIENT_PROCESSES} client processes); ${redis.name}`,
    );
    console.log(
      `one client at a time (baseline)  p50 ${baselineP50.toFixed(1)} ms   p95 ${percentile(
        alone.map((r) => r.ms),
        95,
      ).toFixed(1)} ms   (${BASELINE_REJOINS} rejoins, ${alone.filter(check).length} complete)`,
    );
    for (let round = 1; round <= STORMS; round += 1) {
      await redis.resetStats();
      const rejoins = await storm(following, token, runId);
      const xranges = callsOf(await redis.commandStats(), 'xrange');
      const times = rejoins.filter(check).map((r) => r.ms);
      const failures = new Map<string, number>();
      for (const r of rejoins.filter((r) => r.status !== 200)) failures.set(`${r.status} ${r.code ?? ''}`.trim(), (failures.get(`${r.status} ${r.code ?? ''}`.trim()) ?? 0) + 1);
      const incomplete = rejoins.filter((r) => r.status === 200 && !check(r)).length;
      const p = (q: number) => (times.length ? percentile(times, q).toFixed(0) : '–').padStart(5);
      console.log(
        `storm ${round}: attach-to-complete p50 ${p(50)} ms   p95 ${p(95)} ms   p99 ${p(99)} ms   complete ${times.length}/${rejoins.length}   ` +
          `503: ${rejoins.filter((r) => r.status === 503).length}   other failures: ${
            [...failures]
              .filter(([k]) => !k.startsWith('503'))
              .map(([k, n]) => `${k} ×${n}`)
              .join(', ') || 'none'
          }   ` +
          `incomplete 200s: ${incomplete}   Redis XRANGE calls: ${xranges}   p50 / baseline p50 = ${times.length ? (percentile(times, 50) / baselineP50).toFixed(1) : '–'}`,
      );
    }
  } finally {
    await Promise.all(instances.map((instance) => stopChild(instance.child)));
    await database.drop();
  }
}

/**
 * An OpenAI-compatible model of the bench's own: a streamed answer of
 * LIVE_TOKENS tokens, one every TOKEN_INTERVAL_MS, once `release()` is
 * called for it (so followers can attach while it holds); anything else
 * (titles, suggestions) is answered at once.
 */
class PacedModel {
  private server?: http.Server;
  private held: Array<() => void> = [];
  private waiting: Array<() => void> = [];
  url = '';
  /** When the streamed answer's token i was written (`clock()`), by i: its text is `tok<i> `. */
  sentAt: number[] = [];

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      // Anything but a chat completion (a probe of the endpoint) gets the short answer.
      req.on('end', () => void this.answer((body ? JSON.parse(body) : {}) as { stream?: boolean }, res));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/v1`;
  }

  /** Resolves once a streamed answer is held, waiting for release(). */
  async holding(): Promise<void> {
    if (this.held.length) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    for (const go of this.held.splice(0)) go();
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async answer(request: { stream?: boolean }, res: http.ServerResponse): Promise<void> {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'paced', object: 'chat.completion.chunk', created: 0, model: 'paced', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    if (!request.stream) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'paced',
          object: 'chat.completion',
          created: 0,
          model: 'paced',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Paced' }, finish_reason: 'stop' }],
        }),
      );
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }));
    await new Promise<void>((resolve) => {
      this.held.push(resolve);
      for (const wake of this.waiting.splice(0)) wake();
    });
    this.sentAt = [];
    for (let i = 0; i < LIVE_TOKENS; i += 1) {
      this.sentAt[i] = clock();
      res.write(chunk({ content: `tok${i} ` }));
      await new Promise((resolve) => setTimeout(resolve, TOKEN_INTERVAL_MS));
    }
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  }
}

async function liveOverHttp(redis: RedisTarget): Promise<void> {
  buildService();
  const model = new PacedModel();
  await model.start();
  const database = await createBenchDatabase('bench_followers_live');
  const llm = {
    ...redis.env,
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: model.url,
    LLM_API_KEY: 'bench',
    LLM_MODEL: 'paced',
    LLM_FAST_MODEL: 'paced',
    LLM_MAX_RETRIES: '0',
    LLM_TIMEOUT_MS: '120000',
  };
  const instances: Awaited<ReturnType<typeof startInstance>>[] = [];
  const script = fileURLToPath(import.meta.url);
  try {
    instances.push(await startInstance(database.url, redis.url, JWT_SECRET, llm));
    const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
    instances.push(await startInstance(database.url, redis.url, JWT_SECRET, llm, true, profile));
    const [running, following] = instances.map((instance) => `http://127.0.0.1:${instance.port}`);
    const token = jwt.sign({ sub: 'bench-followers-live', role: 'user' }, JWT_SECRET, { algorithm: 'HS256', expiresIn: '1h' });
    console.log(
      `\nlive followers over HTTP: a streamed turn on instance 1 (${LIVE_TOKENS} tokens, one every ${TOKEN_INTERVAL_MS} ms, from a paced model), ` +
        `followed on instance 2 by clients in ${CLIENT_PROCESSES} processes (${LIVE_CLIENTS === 'native' ? 'bench/native/sse-followers.c' : 'Node'}); lag = arrival at a follower - arrival at the turn's own client; ${redis.name}`,
    );
    const rounds = [
      ...(LIVE_WARMUP_FOLLOWERS > 0 ? [{ followers: LIVE_WARMUP_FOLLOWERS, warmup: true }] : []),
      ...LIVE_FOLLOWERS.map((followers) => ({ followers, warmup: false })),
    ];
    for (const { followers, warmup } of rounds) {
      const clients = await liveClients(script);
      try {
        // The turn, read by its own client on instance 1: the reference arrival of every event.
        let runId = '';
        // The ids of the turn's `token` events: the lag the goal is about. The terminal event, which also ends every follower's stream, is reported apart.
        const tokenIds = new Set<number>();
        // Which of the model's tokens each token event carries (`tok<i> `): its send time is the second reference.
        const tokenIndex = new Map<number, number>();
        const reference = new Promise<Array<[number, number]>>((resolve, reject) => {
          const url = new URL(`${running}/api/chat/stream`);
          const req = http.request(
            {
              method: 'POST',
              host: url.hostname,
              port: url.port,
              path: url.pathname,
              agent: false,
              headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
            },
            (res) =>
              resolve(
                arrivals(
                  res,
                  () => undefined,
                  (block) => {
                    runId ||= /"run_id":"([^"]+)"/.exec(block)?.[1] ?? '';
                    const id = /^id: (\d+)$/m.exec(block);
                    if (id && /^event: token$/m.test(block)) {
                      tokenIds.add(Number(id[1]));
                      const index = /"text":"tok(\d+) /.exec(block)?.[1];
                      if (index !== undefined) tokenIndex.set(Number(id[1]), Number(index));
                    }
                  },
                ),
              ),
          );
          req.on('error', reject);
          req.end(JSON.stringify({ message: 'Tell me a long story.' }));
        });
        await model.holding();
        const ref = await Promise.race([reference.then(() => 'ended'), new Promise((resolve) => setImmediate(resolve))]);
        if (ref === 'ended' || !runId) throw new Error('the turn ended before the followers attached');
        const results = Array.from({ length: CLIENT_PROCESSES }, (_, i) =>
          clients.follow(following, token, runId, Math.floor(followers / CLIENT_PROCESSES) + (i < followers % CLIENT_PROCESSES ? 1 : 0)),
        );
        await Promise.all(results.map((result) => result.attached));
        const probe = PROBE_REDIS ? await probeStream(redis.url, runEventsKey(runId)) : null;
        await redis.resetStats();
        // Scraped now so that the loop delays read after the flow are the flow's (a scrape resets them).
        const loopBefore = await loopAndGc(following);
        await loopAndGc(running);
        const machineBefore = machineCpu();
        const flowing = performance.now();
        const cpuBefore = cpuMs(instances[1].child.pid);
        const clientsCpu = () => clients.processes().reduce((sum, client) => sum + cpuMs(client.pid), 0);
        const clientsBefore = clientsCpu();
        const releasedAt = clock();
        model.release();
        const own = new Map(await reference);
        await probe?.stop();
        const seconds = (performance.now() - flowing) / 1000;
        const followingCpu = cpuMs(instances[1].child.pid) - cpuBefore;
        const clientCpu = clientsCpu() - clientsBefore;
        const machineAfter = machineCpu();
        const loopAfter = await loopAndGc(following);
        const runningLoop = await loopAndGc(running);
        const stats = await redis.commandStats();
        const commands = [...stats.matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
        const perFollower = (await Promise.all(results.map((result) => result.done))).flat();
        // The events sent after the release: the tokens the followers waited for live.
        const live = new Set([...own].filter(([, at]) => at >= releasedAt).map(([id]) => id));
        const lagsByToken = new Map<number, number[]>();
        const endLags: number[] = [];
        const lastId = Math.max(...own.keys());
        let complete = 0;
        let deliveries = 0;
        for (const seen of perFollower) {
          // Complete: every event of the run, ending with the terminal one.
          if (seen.length === own.size && seen.at(-1)![0] === lastId && new Set(seen.map(([id]) => id)).size === own.size) complete += 1;
          for (const [id, at] of seen) {
            if (!live.has(id)) continue;
            deliveries += 1;
            const lag = at - own.get(id)!;
            if (tokenIds.has(id)) {
              if (!lagsByToken.has(id)) lagsByToken.set(id, []);
              lagsByToken.get(id)!.push(lag);
            } else if (id === lastId) endLags.push(lag);
          }
        }
        const lags = [...lagsByToken.values()].flat();
        const p = (values: number[], q: number) => percentile(values, q).toFixed(1).padStart(6);
        console.log(
          `${warmup ? '(warm-up, not a result) ' : ''}${String(followers).padStart(5)} followers: token lag min ${lags.reduce((min, lag) => Math.min(min, lag), Infinity).toFixed(1)} ms   p50 ${p(lags, 50)} ms   p95 ${p(lags, 95)} ms   p99 ${p(lags, 99)} ms   max ${lags.reduce((max, lag) => Math.max(max, lag), 0).toFixed(1)} ms   ` +
            `(${lags.length} token deliveries; ${complete}/${followers} complete)   terminal event lag p50 ${p(endLags, 50)} ms   max ${endLags.reduce((max, lag) => Math.max(max, lag), 0).toFixed(1)} ms   ` +
            `instance 2 CPU ${((followingCpu / deliveries) * 1000).toFixed(1)} µs per delivery ` +
            `(${((followingCpu / (seconds * 1000)) * 100).toFixed(0)}% of a core; the clients ${((clientCpu / (seconds * 1000)) * 100).toFixed(0)}%)   Redis ${(commands / seconds).toFixed(0)} commands/s while the tokens flowed`,
        );
        // Where late tokens come from: a token late for most of its followers was held up on a path they share
        // (instance 2's loop, Redis, instance 1); one late for a few, in their client process.
        const tokenMedians = [...lagsByToken].map(([id, values]) => [id, percentile(values, 50)] as const);
        const late = tokenMedians.filter(([, median]) => median > 40);
        const ticks = (key: 'busy' | 'idle' | 'steal') => machineAfter[key] - machineBefore[key];
        const allTicks = ticks('busy') + ticks('idle') + ticks('steal');
        console.log(
          `      tokens with a median lag over 40 ms: ${late.length} of ${tokenMedians.length}` +
            `${late.length ? ` (${late.map(([id, median]) => `#${id} ${median.toFixed(0)} ms`).join(', ')})` : ''}; ` +
            `instance 2 event-loop delay max ${loopAfter.lagMaxMs.toFixed(1)} ms, p99 ${loopAfter.lagP99Ms.toFixed(1)} ms, GC ${(loopAfter.gcMs - loopBefore.gcMs).toFixed(0)} ms; ` +
            `instance 1 (the run's) event-loop delay max ${runningLoop.lagMaxMs.toFixed(1)} ms; ` +
            `machine CPU busy ${((ticks('busy') / allTicks) * 100).toFixed(0)}%, steal ${((ticks('steal') / allTicks) * 100).toFixed(1)}%`,
        );
        // The same deliveries timed from the model's write of each token (the bench's process, like the turn's client):
        // a late read by the turn's own client understates the lag above, never this one.
        const sentAt = (id: number) => model.sentAt[tokenIndex.get(id) ?? -1] ?? NaN;
        const fromSend = perFollower.flatMap((seen) => seen.filter(([id]) => live.has(id) && tokenIds.has(id)).map(([id, at]) => at - sentAt(id))).filter(Number.isFinite);
        const ownFromSend = [...tokenIds]
          .filter((id) => live.has(id))
          .map((id) => own.get(id)! - sentAt(id))
          .filter(Number.isFinite);
        console.log(
          `      from the model's write of each token: the followers p50 ${p(fromSend, 50)} ms, p95 ${p(fromSend, 95)} ms, p99 ${p(fromSend, 99)} ms (${fromSend.length} deliveries); ` +
            `the turn's own client p50 ${p(ownFromSend, 50)} ms, p99 ${p(ownFromSend, 99)} ms, max ${ownFromSend.reduce((max, lag) => Math.max(max, lag), 0).toFixed(1)} ms`,
        );
        if (probe) {
          // In Redis after the turn's own client had it (the running instance writes its client first, then Redis).
          const inRedis = (id: number) => (probe.arrivals.get(id) ?? NaN) - own.get(id)!;
          const redisLags = tokenMedians.map(([id]) => inRedis(id)).filter(Number.isFinite);
          console.log(
            `      in Redis (the bench's own XREAD) after the turn's client: p50 ${p(redisLags, 50)} ms, p99 ${p(redisLags, 99)} ms; ` +
              `late tokens: ${late.map(([id, median]) => `#${id} Redis +${inRedis(id).toFixed(0)} ms, followers +${median.toFixed(0)} ms`).join('; ') || 'none'}`,
          );
        }
      } finally {
        clients.close();
      }
    }
  } finally {
    await Promise.all(instances.map((instance) => stopChild(instance.child)));
    await database.drop();
    await model.stop();
  }
}

async function main(): Promise<void> {
  if (REDIS_CLUSTER_MASTERS > 0) {
    const cluster = await new OwnRedisCluster(REDIS_CLUSTER_MASTERS).start();
    try {
      if (PARTS.has('tail')) console.log('part 1 (in process, one Redis) is skipped on a cluster');
      if (PARTS.has('storm')) await stormOverHttp(clusterRedis(cluster));
      if (PARTS.has('live')) await liveOverHttp(clusterRedis(cluster));
    } finally {
      await cluster.destroy();
    }
    return;
  }
  const redis = await startRedis();
  try {
    if (PARTS.has('tail')) await tailAgainstPolling(redis.url);
    if (PARTS.has('storm')) await stormOverHttp(oneRedis(redis.url));
    if (PARTS.has('live')) await liveOverHttp(oneRedis(redis.url));
  } finally {
    await redis.stop();
  }
}

/** A follower of the shared tail as the SSE routes are: it reads the stream `follow` resolves to, in a task of its own, until the run ends or it stops. */
function tailFollower(following: RunEventsService) {
  return async (runId: string, onEvent: (event: RunEvent) => void): Promise<() => void> => {
    const stopped = new AbortController();
    const events = await following.follow(runId, 0, { status: async () => 'running', signal: stopped.signal });
    void (async () => {
      for await (const event of events) onEvent(event);
    })();
    return () => stopped.abort();
  };
}

async function tailAgainstPolling(url: string): Promise<void> {
  const following = await service(url);
  const tail = await measure(url, tailFollower(following));
  await following.onApplicationShutdown();

  const reader = createClient({ url });
  await reader.connect();
  const polling = await measure(url, pollingFollower(reader as unknown as Parameters<typeof pollingFollower>[0]));
  await reader.quit();

  const row = (name: string, s: Stats) =>
    `${name.padEnd(34)} ${s.commandsPerSecond.toFixed(0).padStart(8)} cmd/s   lag p50 ${s.lagP50.toFixed(2).padStart(7)} ms   p99 ${s.lagP99.toFixed(2).padStart(7)} ms   (${s.delivered} deliveries in ${s.seconds.toFixed(1)} s)`;
  console.log(`${FOLLOWERS} followers on another instance, ${TOKENS} tokens every ${TOKEN_INTERVAL_MS} ms, own redis-server`);
  console.log(row('shared XREAD BLOCK tail (follow)', tail));
  console.log(row('per-follower XRANGE poll, 100 ms', polling));
  console.log(`Redis commands: tail / poll = ${(tail.commandsPerSecond / polling.commandsPerSecond).toFixed(3)}`);
}

if (process.argv[2] === 'client') {
  clientProcess();
} else {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
