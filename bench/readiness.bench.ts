/**
 * Time to ready after a start, with the in-memory dense index: for each
 * LEAVES (100 000 and 1 000 000 by default), a throw-away database gets that
 * many leaves by plain SQL (test/support/seed-leaves.ts), then the built
 * service (`node dist/main.js`, RAG_DENSE_BACKEND=memory) starts on it.
 * Printed, from the spawn: when GET /health first answers 200 (live), when
 * GET /health/ready first answers 200 (the index loaded); how fast /health
 * answered while the index loaded (p50/p99/max of the polls, every POLL_MS:
 * the event loop stays responsive), and a knowledge search sent as soon as
 * the instance is live (its latency, and whether its dense leg was skipped).
 *
 *   npm run bench:readiness     (LEAVES=100000,1000000, POLL_MS=50; SKIP_NEST_BUILD=true to use the dist/ already built)
 */
import jwt from 'jsonwebtoken';
import { seedLeaves } from '../test/support/seed-leaves.js';
import { buildService, getJson, Instance, startInstance, startRedis, stopChild, waitForInstance } from './service-instances.js';
import { createBenchDatabase, percentile } from './support.js';

const LEAVES = (process.env.LEAVES ?? '100000,1000000').split(',').map((v) => Number(v.trim()));
const POLL_MS = Number(process.env.POLL_MS ?? 50);
const JWT_SECRET = 'bench-readiness-secret-not-for-production';
// Each 503 of /health/ready while loading would be logged as an error: only fatal lines.
const ENV = { RAG_DENSE_BACKEND: 'memory', KNOWLEDGE_SEED_ON_START: 'false', LOG_LEVEL: 'fatal' };

async function search(instance: Instance, token: string): Promise<{ ms: number; status: number; denseSkipped: string | null }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${instance.port}/api/knowledge/search`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: 'seeded leaf router manual' }),
  });
  const body = (await res.json()) as { rag_trace?: { dense_skipped?: string | null } };
  return { ms: performance.now() - started, status: res.status, denseSkipped: body.rag_trace?.dense_skipped ?? null };
}

async function measure(leaves: number, redisUrl: string): Promise<void> {
  const database = await createBenchDatabase('bench_readiness');
  try {
    // A first start applies the migrations and records the knowledge base's embedding space.
    await stopChild((await startInstance(database.url, redisUrl, JWT_SECRET, ENV)).child);
    const seeding = performance.now();
    await seedLeaves(database.url, leaves);
    const seededSeconds = (performance.now() - seeding) / 1000;

    const instance = await startInstance(database.url, redisUrl, JWT_SECRET, ENV, false);
    const token = jwt.sign({ sub: 'bench-readiness-user', role: 'user' }, JWT_SECRET, { algorithm: 'HS256', expiresIn: '1h' });
    try {
      let liveAt: number | undefined;
      let readyAt: number | undefined;
      let searched: Promise<Awaited<ReturnType<typeof search>>> | undefined;
      const healthMs: number[] = [];
      await waitForInstance(
        instance,
        async () => {
          const asked = performance.now();
          const health = await getJson(instance.port, '/health');
          if (health?.status !== 200) return false;
          if (liveAt === undefined) {
            liveAt = performance.now() - instance.startedAt;
            searched = search(instance, token);
          } else {
            healthMs.push(performance.now() - asked);
          }
          if ((await getJson(instance.port, '/health/ready'))?.status !== 200) return false;
          readyAt = performance.now() - instance.startedAt;
          return true;
        },
        'ready',
        POLL_MS,
        30 * 60_000,
      );
      const during = await searched!;
      const after = await search(instance, token);
      const ms = (values: number[], p: number) => (values.length ? percentile(values, p).toFixed(0) : '–');
      console.log(
        `${leaves.toLocaleString('en').padStart(9)} leaves (seeded in ${seededSeconds.toFixed(0)} s): live ${(liveAt! / 1000).toFixed(1)} s, ` +
          `ready ${(readyAt! / 1000).toFixed(1)} s after the spawn (index loaded ${((readyAt! - liveAt!) / 1000).toFixed(1)} s after live); ` +
          `/health while loading p50 ${ms(healthMs, 50)} ms, p99 ${ms(healthMs, 99)} ms, max ${healthMs.length ? Math.max(...healthMs).toFixed(0) : '–'} ms (${healthMs.length} polls); ` +
          `search at live: ${during.status} in ${during.ms.toFixed(0)} ms (${during.denseSkipped ? 'dense leg skipped' : 'dense leg ran'}); ` +
          `search when ready: ${after.status} in ${after.ms.toFixed(0)} ms (${after.denseSkipped ? 'dense leg skipped' : 'dense leg ran'})`,
      );
    } finally {
      await stopChild(instance.child);
    }
  } finally {
    await database.drop();
  }
}

async function main(): Promise<void> {
  buildService();
  const redis = await startRedis();
  try {
    console.log(`time to ready after a start, in-memory dense index (RAG_DENSE_BACKEND=memory), local embeddings, /health polled every ${POLL_MS} ms`);
    for (const leaves of LEAVES) await measure(leaves, redis.url);
  } finally {
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
