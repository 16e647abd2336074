/**
 * (a) Median latency of a sync chat turn (local provider, POST /api/chat) around
 *     turn 10 and turn 200 of one session, and their ratio (goal: at most 1.2).
 *     Baseline in the same process: a plain LangGraph graph with
 *     MessagesAnnotation + PostgresSaver (whole history in the checkpointed
 *     state, one thread per session), same local model and tools.
 * (b) Time from request to the first SSE event and to `done` on POST /api/chat/stream.
 * (c) Tracing overhead: two instances of the built service (`node dist/main.js`)
 *     on the same database and Redis, one with tracing off, one exporting to an
 *     OTLP/HTTP receiver on loopback (OTEL_EXPORTER_OTLP_ENDPOINT, http/protobuf,
 *     the SDK's default batching); tracing is process-wide, hence two processes.
 *     Turns alternate between them (ABAB…, the first of each pair alternating),
 *     each instance's sessions renewed every 10 turns, in TRACING_ROUNDS rounds
 *     of fresh instances (the one started first alternating); the median of
 *     each arm over every round, their ratio (goal: at most 1.1), each round's
 *     ratio, and the main thread's CPU per turn. Builds the service first (SKIP_NEST_BUILD=true
 *     uses dist/ as it is); TRACING_TURNS=0 skips it, TURNS=0 runs it alone; TRACING_ENV (JSON) adds
 *     variables to the traced instance.
 *
 *   npm run bench:chat          (TURNS=205, STREAMS=40, TRACING_TURNS=100, TRACING_ROUNDS=2)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { JwtService } from '@nestjs/jwt';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import pino from 'pino';
import { routeAfterModel } from '../src/agent/agent.factory.js';
import { LocalChatModel } from '../src/models/local-chat-model.js';
import { ToolRegistry } from '../src/agent/tools/tool-registry.service.js';
import { AppModule } from '../src/app.module.js';
import { TurnContext } from '../src/agent/turn-context.js';
import { CheckpointerProvider } from '../src/agent/checkpointer.provider.js';
import { setupApp } from '../src/setup-app.js';
import { benchConfig, fmt, median, percentile, runBench } from './support.js';
import { buildService, Instance, startInstance, stopChild } from './service-instances.js';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { RetrievalScope } from '../src/knowledge/collections/retrieval-scope.js';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';

const TURNS = Number(process.env.TURNS ?? 205);
const STREAMS = Number(process.env.STREAMS ?? 40);
const TRACING_TURNS = Number(process.env.TRACING_TURNS ?? 100);
const TRACING_ROUNDS = Math.max(1, Number(process.env.TRACING_ROUNDS ?? 2));
/** More variables for the traced instance, as JSON (a sampler, say: `{"OTEL_TRACES_SAMPLER":"always_off"}`). */
const TRACING_ENV = JSON.parse(process.env.TRACING_ENV ?? '{}') as Record<string, string>;
const QUESTIONS = ['How do I reset the Aurora X1 router?', '退货政策是什么？', 'How long is the Aurora X2 warranty?', '积分的有效期是多久？', 'What is the hotel limit in Tokyo?'];

/** An OTLP/HTTP receiver on loopback that accepts every export (any protocol) and counts requests and bytes. */
async function startOtlpSink(): Promise<{ url: string; exports: () => number; bytes: () => number; close: () => Promise<void> }> {
  let exports = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** One sync turn on an instance: its latency in ms and the session it belongs to. */
async function timedTurn(port: number, headers: Record<string, string>, message: string, session?: string): Promise<{ ms: number; session: string }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/chat`, { method: 'POST', headers, body: JSON.stringify({ message, ...(session ? { session_id: session } : {}) }) });
  const body = (await res.json()) as { session_id: string };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`turn on port ${port}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return { ms, session: body.session_id };
}

/** One streamed turn on an instance: ms until its `done` event. */
async function timedStream(port: number, headers: Record<string, string>, message: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/chat/stream`, { method: 'POST', headers, body: JSON.stringify({ message }) });
  const text = await res.text();
  if (!text.includes('event: done')) throw new Error(`stream on port ${port} ended without done: ${text.slice(-300)}`);
  return performance.now() - started;
}

/**
 * The CPU time (user + system, ms) a process's main thread has used, from
 * /proc (Linux; NaN elsewhere): the thread that serves the requests, without
 * the collector's and the libuv pool's threads, or the span export worker's.
 */
function mainThreadCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

type Arm = { label: string; env: Record<string, string>; sync: number[]; streams: number[]; cpuMs: number; rounds: Array<{ sync: number; streams: number }> };

/**
 * (c): the same turns on an instance with tracing off and one exporting to a
 * loopback receiver, interleaved; in TRACING_ROUNDS rounds of fresh
 * instances, the one started first alternating, so that neither arm is
 * always the first started (an instance's own luck, its place on the cores or
 * its compiled code, moved one instance's median by a few per cent against
 * another's of the same build). The turns of every round are pooled.
 */
async function tracingOverhead(databaseUrl: string, redisUrl: string, jwtSecret: string, headers: Record<string, string>): Promise<void> {
  buildService();
  const sink = await startOtlpSink();
  const off: Arm = { label: 'tracing off', env: {}, sync: [], streams: [], cpuMs: 0, rounds: [] };
  const on: Arm = { label: 'tracing on, OTLP to loopback', env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, ...TRACING_ENV }, sync: [], streams: [], cpuMs: 0, rounds: [] };
  console.log(`tracing overhead: ${TRACING_ROUNDS} rounds of ${TRACING_TURNS} sync and ${TRACING_TURNS} streamed turns per instance, interleaved (built service, local provider)`);
  try {
    for (let round = 0; round < TRACING_ROUNDS; round += 1) {
      const arms = round % 2 === 0 ? [off, on] : [on, off];
      const instances = new Map<Arm, Instance>();
      try {
        for (const arm of arms) instances.set(arm, await startInstance(databaseUrl, redisUrl, jwtSecret, arm.env));
        for (let i = 0; i < 20; i += 1) for (const arm of arms) await timedTurn(instances.get(arm)!.port, headers, QUESTIONS[i % QUESTIONS.length]);
        const sessions = new Map<Arm, string | undefined>();
        const cpuBefore = new Map(arms.map((arm) => [arm, mainThreadCpuMs(instances.get(arm)!.child.pid)]));
        const from = new Map(arms.map((arm) => [arm, arm.sync.length]));
        for (let i = 0; i < TRACING_TURNS; i += 1) {
          for (const arm of i % 2 === 0 ? arms : [...arms].reverse()) {
            const port = instances.get(arm)!.port;
            const turn = await timedTurn(port, headers, QUESTIONS[i % QUESTIONS.length], i % 10 === 0 ? undefined : sessions.get(arm));
            arm.sync.push(turn.ms);
            sessions.set(arm, turn.session);
            arm.streams.push(await timedStream(port, headers, QUESTIONS[(i + 1) % QUESTIONS.length]));
          }
        }
        for (const arm of arms) {
          arm.cpuMs += mainThreadCpuMs(instances.get(arm)!.child.pid) - cpuBefore.get(arm)!;
          arm.rounds.push({ sync: median(arm.sync.slice(from.get(arm))), streams: median(arm.streams.slice(from.get(arm))) });
        }
      } finally {
        for (const instance of instances.values()) await stopChild(instance.child);
      }
    }
  } finally {
    await sink.close();
  }
  const turns = 2 * TRACING_TURNS * TRACING_ROUNDS;
  for (const arm of [off, on]) {
    console.log(
      `${arm.label.padEnd(30)} POST /api/chat p50 ${fmt(median(arm.sync)).padStart(10)} (p95 ${fmt(percentile(arm.sync, 95))}); ` +
        `/api/chat/stream to done p50 ${fmt(median(arm.streams)).padStart(10)} (p95 ${fmt(percentile(arm.streams, 95))}); ` +
        `main thread CPU ${(arm.cpuMs / turns).toFixed(2)} ms per turn`,
    );
  }
  const perRound = off.rounds.map(
    (_, round) => `${(on.rounds[round].sync / off.rounds[round].sync).toFixed(3)}/${(on.rounds[round].streams / off.rounds[round].streams).toFixed(3)}`,
  );
  console.log(
    `tracing on / off: POST /api/chat p50 ${(median(on.sync) / median(off.sync)).toFixed(3)}, stream to done p50 ${(median(on.streams) / median(off.streams)).toFixed(3)}, ` +
      `main thread CPU per turn ${(on.cpuMs / off.cpuMs).toFixed(3)} (rounds, sync/stream p50: ${perRound.join(', ')}); ` +
      `the receiver got ${sink.exports()} exports (${(sink.bytes() / 1e6).toFixed(2)} MB)`,
  );
}

/** Median of the turns within ±5 of `at` (1-based). */
function around(times: number[], at: number): number {
  return median(times.slice(Math.max(0, at - 6), Math.min(times.length, at + 5)));
}

function report(label: string, times: number[]): void {
  const early = around(times, 10);
  const late = around(times, 200);
  console.log(`${label.padEnd(46)} turn 10: ${fmt(early).padStart(10)}   turn 200: ${fmt(late).padStart(10)}   ratio: ${(late / early).toFixed(2)}`);
}

runBench('bench_chat', async (databaseUrl, onClose) => {
  const config = benchConfig(databaseUrl, { CHAT_RECENT_MESSAGES: '12' });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bodyParser: false, logger: ['warn', 'error'] });
  onClose(() => app.close());
  setupApp(app, config, pino({ level: 'warn' }));
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const token = new JwtService({ secret: config.auth.jwtSecret }).sign({ sub: 'bench-user' }, { expiresIn: '1h' });
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  // TURNS=0 skips (a) and (b): the tracing overhead alone.
  if (TURNS > 0) {
    console.log(`${TURNS} knowledge-base turns in one session, local provider, PostgreSQL + Redis`);

    // Warm-up (JIT, pools, caches) in a session of its own, so turn 10 measures turns, not start-up.
    let warm: string | undefined;
    for (let i = 0; i < 20; i += 1) {
      const res = await fetch(`${base}/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length], ...(warm ? { session_id: warm } : {}) }),
      });
      warm = ((await res.json()) as { session_id: string }).session_id;
    }

    // (a) this service
    let session: string | undefined;
    const ours: number[] = [];
    for (let i = 0; i < TURNS; i += 1) {
      const started = performance.now();
      const res = await fetch(`${base}/api/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length], ...(session ? { session_id: session } : {}) }),
      });
      const body = (await res.json()) as { session_id: string };
      ours.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`turn ${i + 1}: HTTP ${res.status} ${JSON.stringify(body)}`);
      session = body.session_id;
    }
    report('this service: POST /api/chat (HTTP, commit)', ours);

    // (a) baseline: the whole conversation in LangGraph state, checkpointed by PostgresSaver.
    const saver = new PostgresSaver(app.get(CheckpointerProvider).pool);
    const tools = app.get(ToolRegistry);
    // A context per turn, as the service makes one per request: the tools' budgets are per turn.
    const turnContext = () => ({
      turn: new TurnContext({ userId: 'bench', sessionId: randomUUID(), runId: randomUUID(), mode: 'sync' }, { scope: RetrievalScope.of([DEFAULT_COLLECTION_ID]) }),
    });
    const boundTools = tools.tools;
    const model = new LocalChatModel().bindTools(boundTools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke([new SystemMessage('You are helpful.'), ...state.messages])] }))
      .addNode('tools', new ToolNode(boundTools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeAfterModel, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer: saver });
    const warmThread = randomUUID();
    for (let i = 0; i < 20; i += 1) {
      await graph.invoke({ messages: [new HumanMessage(QUESTIONS[i % QUESTIONS.length])] }, { configurable: { thread_id: warmThread }, context: turnContext() });
    }
    const thread = randomUUID();
    const baseline: number[] = [];
    for (let i = 0; i < TURNS; i += 1) {
      const context = turnContext();
      const started = performance.now();
      await graph.invoke({ messages: [new HumanMessage(QUESTIONS[i % QUESTIONS.length])] }, { configurable: { thread_id: thread }, context });
      baseline.push(performance.now() - started);
    }
    report('baseline: MessagesAnnotation + PostgresSaver', baseline);
    const [stored] = (
      await app.get(CheckpointerProvider).pool.query(
        `SELECT
         (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1)::bigint AS baseline_bytes,
         (SELECT count(*) FROM checkpoints WHERE thread_id NOT IN ($1, $2))::int AS our_checkpoints`,
        [thread, warmThread],
      )
    ).rows as Array<{ baseline_bytes: string; our_checkpoints: number }>;
    console.log(
      `checkpoint storage after ${TURNS} turns: baseline ${(Number(stored.baseline_bytes) / 1e6).toFixed(2)} MB of blobs; this service ${stored.our_checkpoints} checkpoints`,
    );

    // (b) streaming latency
    const firstEvent: number[] = [];
    const done: number[] = [];
    for (let i = 0; i < STREAMS; i += 1) {
      const started = performance.now();
      const res = await fetch(`${base}/api/chat/stream`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length] }),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let sawFirst = false;
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        text += decoder.decode(value, { stream: true });
        if (!sawFirst && text.includes('event: ')) {
          firstEvent.push(performance.now() - started);
          sawFirst = true;
        }
        if (text.includes('event: done')) {
          done.push(performance.now() - started);
          await reader.cancel();
          break;
        }
      }
    }
    console.log(
      `POST /api/chat/stream over ${STREAMS} new sessions: first event p50 ${fmt(median(firstEvent))} (p95 ${fmt(percentile(firstEvent, 95))}), ` +
        `done p50 ${fmt(median(done))} (p95 ${fmt(percentile(done, 95))})`,
    );
  }

  // (c) tracing overhead
  if (TRACING_TURNS > 0) await tracingOverhead(databaseUrl, config.redis.url ?? 'redis://127.0.0.1:6379/14', config.auth.jwtSecret, headers);
});
