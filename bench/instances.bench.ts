/**
 * 1, 2 and 3 instances of the built service (`node dist/main.js`) behind a
 * small round-robin HTTP proxy, sharing one throw-away PostgreSQL database and
 * one redis-server of the bench's own. USERS concurrent users, each with its own
 * JWT and session, send TURNS_PER_USER streamed turns one after the other
 * (`POST /api/chat/stream`, read to `done`). Per instance count: turns/s,
 * request → `done` latency p50/p95, errors by status or SSE code, requests per
 * instance; then every session's transcript (`GET /api/sessions/:id/messages`,
 * through the proxy too) must hold each answered turn's user message and its
 * answer exactly once and in order: lost, duplicated or out-of-order turns fail
 * the bench (exit code 1).
 *
 * The proxy routes per request (each HTTP request goes to the next instance;
 * its upstream connections are not kept alive), so one user's turns and
 * transcript reads land on different instances.
 *
 *   npm run bench:instances     (INSTANCES=1,2,3, USERS=50, TURNS_PER_USER=10, WARMUP_TURNS=10;
 *                                SKIP_NEST_BUILD=true to use the dist/ already built)
 */
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import jwt from 'jsonwebtoken';
import { buildService, Instance, startInstance as startServiceInstance, startRedis, stopChild } from './service-instances.js';
import { percentile, runBench } from './support.js';

const INSTANCES = (process.env.INSTANCES ?? '1,2,3').split(',').map((n) => Number(n.trim()));
const USERS = Number(process.env.USERS ?? 50);
const TURNS_PER_USER = Number(process.env.TURNS_PER_USER ?? 10);
const WARMUP_TURNS = Number(process.env.WARMUP_TURNS ?? 10);
const JWT_SECRET = 'bench-instances-secret-not-for-production';
const QUESTIONS = ['How do I reset the Aurora X1 router?', '退货政策是什么？', 'How long is the Aurora X2 warranty?', '积分的有效期是多久？', 'What is the hotel limit in Tokyo?'];

// Uploads, cancels and tickets: the bench sends none, so their limits keep their defaults.
const startInstance = (databaseUrl: string, redisUrl: string): Promise<Instance> => startServiceInstance(databaseUrl, redisUrl, JWT_SECRET);

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/** Round-robin per request; upstream connections are one-shot (agent: false), so every request is routed on its own. */
async function startProxy(ports: number[]): Promise<{ url: string; counts: number[]; stop: () => Promise<void> }> {
  const counts = ports.map(() => 0);
  let next = 0;
  const server = http.createServer((req, res) => {
    const index = next;
    next = (next + 1) % ports.length;
    counts[index] += 1;
    const upstream = http.request({ host: '127.0.0.1', port: ports[index], method: req.method, path: req.url, headers: endToEnd(req.headers), agent: false }, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, endToEnd(upstreamRes.headers));
      upstreamRes.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${error.message}`);
      else res.destroy();
    });
    // A client that goes away (it read `done` and cancelled) takes the upstream request with it.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type SseEvent = { event: string; data: Record<string, unknown> };

/** One streamed turn, read to `done` or `error`: the events, or why it failed. */
async function streamTurn(base: string, token: string, message: string, sessionId: string | undefined): Promise<{ events: SseEvent[]; failure?: string }> {
  const res = await fetch(`${base}/api/chat/stream`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ message, ...(sessionId ? { session_id: sessionId } : {}) }),
  });
  if (res.status !== 200) {
    await res.text();
    return { events: [], failure: `HTTP ${res.status}` };
  }
  const events: SseEvent[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { events, failure: 'stream ended without done' };
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (!event) continue; // heartbeat comment
      const parsed = { event, data: JSON.parse(data) as Record<string, unknown> };
      events.push(parsed);
      if (event === 'done' || event === 'error') {
        await reader.cancel();
        return parsed.event === 'done' ? { events } : { events, failure: `SSE error ${String(parsed.data.code)}` };
      }
    }
  }
}

type Turn = { message: string; response: string };
/** A turn that failed, and whether the service said its message was kept (`message_saved`; null: not known). */
type FailedTurn = { message: string; saved: boolean | null };
type User = { token: string; sessionId?: string; answered: Turn[]; failed: FailedTurn[] };
type Result = {
  instances: number;
  turns: number;
  seconds: number;
  latencies: number[];
  errors: Map<string, number>;
  perInstance: number[];
  lost: number;
  duplicated: number;
  outOfOrder: number;
  phantom: number;
  loadBefore: number;
};

async function runUsers(base: string, label: string, users: number, turns: number, latencies: number[], errors: Map<string, number>): Promise<User[]> {
  const all: User[] = Array.from({ length: users }, (_, u) => ({
    token: jwt.sign({ sub: `bench-${label}-user-${u}`, role: 'user' }, JWT_SECRET, { algorithm: 'HS256', expiresIn: '1h' }),
    answered: [],
    failed: [],
  }));
  await Promise.all(
    all.map(async (user, u) => {
      for (let i = 0; i < turns; i += 1) {
        const message = `turn ${i} of user ${u} (${label}): ${QUESTIONS[(u + i) % QUESTIONS.length]}`;
        const started = performance.now();
        let outcome: Awaited<ReturnType<typeof streamTurn>>;
        try {
          outcome = await streamTurn(base, user.token, message, user.sessionId);
        } catch (error) {
          outcome = { events: [], failure: `network ${(error as Error).message}` };
        }
        const metadata = outcome.events.find((e) => e.event === 'metadata');
        if (metadata && !user.sessionId) user.sessionId = metadata.data.session_id as string;
        if (outcome.failure) {
          errors.set(outcome.failure, (errors.get(outcome.failure) ?? 0) + 1);
          const error = outcome.events.find((e) => e.event === 'error');
          // An HTTP error answers before the turn starts; a broken connection leaves it unknown.
          const saved = error ? (error.data.message_saved as boolean | null) : outcome.failure.startsWith('HTTP ') ? false : null;
          user.failed.push({ message, saved });
          continue;
        }
        latencies.push(performance.now() - started);
        const done = outcome.events[outcome.events.length - 1];
        user.answered.push({ message, response: done.data.response as string });
      }
    }),
  );
  return all;
}

type MessageInfo = { seq: number; type: string; status: string; content: string };

/**
 * Each answered turn's user message once, followed (before the next user
 * message) by its answer, and the turns in the order sent. A failed turn's
 * message must be there once when its error said `message_saved: true`
 * (else it is lost) and absent when it said false (else a phantom).
 */
async function checkTranscripts(base: string, users: User[]): Promise<{ lost: number; duplicated: number; outOfOrder: number; phantom: number }> {
  let lost = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let phantom = 0;
  for (const user of users) {
    if (!user.sessionId) {
      lost += user.answered.length + user.failed.filter((f) => f.saved === true).length;
      continue;
    }
    const res = await fetch(`${base}/api/sessions/${user.sessionId}/messages`, { headers: { Authorization: `Bearer ${user.token}` } });
    if (res.status !== 200) throw new Error(`transcript of ${user.sessionId}: HTTP ${res.status} ${await res.text()}`);
    const messages = ((await res.json()) as { messages: MessageInfo[] }).messages;
    let previous = -1;
    for (const turn of user.answered) {
      const at = messages.flatMap((m, index) => (m.type === 'human' && m.content === turn.message ? [index] : []));
      if (at.length === 0) {
        lost += 1;
        continue;
      }
      if (at.length > 1) duplicated += 1;
      if (at[0] < previous) outOfOrder += 1;
      previous = at[0];
      const nextHuman = messages.findIndex((m, index) => index > at[0] && m.type === 'human');
      const answers = messages.slice(at[0] + 1, nextHuman < 0 ? messages.length : nextHuman).filter((m) => m.type === 'ai' && m.content === turn.response);
      if (answers.length === 0) lost += 1;
      else if (answers.length > 1) duplicated += 1;
    }
    for (const turn of user.failed) {
      const stored = messages.filter((m) => m.type === 'human' && m.content === turn.message).length;
      if (turn.saved === true && stored === 0) lost += 1;
      if (turn.saved !== null && stored > 1) duplicated += 1;
      if (turn.saved === false && stored > 0) phantom += 1;
    }
  }
  return { lost, duplicated, outOfOrder, phantom };
}

async function measure(databaseUrl: string, redisUrl: string, count: number): Promise<Result> {
  const instances: Instance[] = [];
  try {
    // One after the other: the first applies the migrations and seeds the corpus on a fresh database.
    for (let i = 0; i < count; i += 1) instances.push(await startInstance(databaseUrl, redisUrl));
    // Warm-up (JIT, pools, caches) on every instance directly, in sessions of its own.
    for (const instance of instances) {
      await runUsers(`http://127.0.0.1:${instance.port}`, `warm-n${count}-p${instance.port}`, 1, WARMUP_TURNS, [], new Map());
    }
    const proxy = await startProxy(instances.map((i) => i.port));
    try {
      const latencies: number[] = [];
      const errors = new Map<string, number>();
      const loadBefore = os.loadavg()[0];
      const started = performance.now();
      const users = await runUsers(proxy.url, `n${count}`, USERS, TURNS_PER_USER, latencies, errors);
      const seconds = (performance.now() - started) / 1000;
      const turnRequests = [...proxy.counts];
      const check = await checkTranscripts(proxy.url, users);
      return {
        instances: count,
        turns: latencies.length,
        seconds,
        latencies,
        errors,
        perInstance: turnRequests,
        ...check,
        loadBefore,
      };
    } finally {
      await proxy.stop();
    }
  } finally {
    await Promise.all(instances.map((i) => stopChild(i.child)));
  }
}

const ms = (latencies: number[], p: number) => (latencies.length ? percentile(latencies, p).toFixed(0) : '–').padStart(6);

runBench('bench_instances', async (databaseUrl, onClose) => {
  buildService();
  const redis = await startRedis();
  onClose(redis.stop);
  console.log(
    `${USERS} concurrent users × ${TURNS_PER_USER} streamed turns (POST /api/chat/stream to done), local provider, ` +
      `round-robin proxy per request, one PostgreSQL database, own redis-server; ${WARMUP_TURNS} warm-up turns per instance not counted`,
  );
  const results: Result[] = [];
  for (const count of INSTANCES) {
    const result = await measure(databaseUrl, redis.url, count);
    results.push(result);
    const errors = [...result.errors].map(([kind, n]) => `${kind}: ${n}`).join(', ') || 'none';
    console.log(
      `${String(result.instances).padStart(2)} instance(s)  ${(result.turns / result.seconds).toFixed(1).padStart(6)} turns/s   ` +
        `p50 ${ms(result.latencies, 50)} ms   p95 ${ms(result.latencies, 95)} ms   ` +
        `${result.turns} turns in ${result.seconds.toFixed(1)} s   lost ${result.lost}   duplicated ${result.duplicated}   out of order ${result.outOfOrder}   ` +
        `phantom ${result.phantom}   errors: ${errors}   turns per instance: ${result.perInstance.join(' / ')}   (load average before: ${result.loadBefore.toFixed(2)})`,
    );
  }
  const expected = USERS * TURNS_PER_USER;
  const unanswered = results.filter((r) => r.turns !== expected);
  if (unanswered.length > 0) {
    // Errors are figures (an overloaded machine answers 503s by design); what was stored must still be exact.
    console.log(`not every turn answered: ${unanswered.map((r) => `${r.instances} instance(s) ${r.turns}/${expected}`).join(', ')} (errors above)`);
  }
  const failed = results.filter((r) => r.lost > 0 || r.duplicated > 0 || r.outOfOrder > 0 || r.phantom > 0);
  if (failed.length > 0) {
    const detail = failed.map((r) => `${r.instances} instance(s): lost ${r.lost}, duplicated ${r.duplicated}, out of order ${r.outOfOrder}, phantom ${r.phantom}`).join('; ');
    console.error(`\nFAIL: ${detail}\n`);
    throw new Error(`bench:instances FAIL: ${detail}`);
  }
  console.log(`all ${results.length} runs: every answered turn's message and answer stored exactly once and in order; no failed turn stored against what its error said`);
});
