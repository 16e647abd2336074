import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { InProcessIngestQueue } from '../src/knowledge/ingest/jobs/in-process-ingest-queue.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { adminAuth } from './support/admin.js';
import { FakeEmbeddingsServer } from './support/fake-embeddings-server.js';
import { openSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { TEST_REDIS_URL } from './support/test-env.js';

/**
 * REDIS_URL=none (one instance, no Redis): ingest jobs run on the in-process
 * queue. An upload is ingested and becomes searchable, and a job the last
 * process left unfinished is taken up when the service starts again; the
 * ingest queue opens no Redis connection (BullMQ's connections are ioredis ones).
 */

const manual = (product: string) =>
  Buffer.from(`# The ${product}\n${Array.from({ length: 20 }, (_, i) => `The ${product} manual, section ${i}: keep the ${product} dry.`).join('\n')}`, 'utf8');

describe('Ingest jobs without Redis (REDIS_URL=none)', () => {
  const url = freshDatabaseUrl();
  const apps: TestApp[] = [];
  let embeddings: FakeEmbeddingsServer;
  let redisConnects: ReturnType<typeof jest.spyOn>;

  const app = async (env: Record<string, string> = {}) => {
    const t = await createTestApp({ DATABASE_URL: url, KNOWLEDGE_SEED_ON_START: 'false', REDIS_URL: 'none', ...embeddings.env(), ...env });
    apps.push(t);
    return t;
  };
  const close = async (t: TestApp) => {
    apps.splice(apps.indexOf(t), 1);
    await t.close();
  };
  const search = async (t: TestApp, query: string) => {
    const res = await request(t.app.getHttpServer()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query, top_k: 3 }).expect(200);
    return (res.body.chunks as Array<{ source: string }>).map((chunk) => chunk.source);
  };

  beforeAll(async () => {
    await ensureDatabase(url);
    embeddings = await new FakeEmbeddingsServer().start();
    redisConnects = jest.spyOn(Redis.prototype, 'connect');
  });
  afterAll(async () => {
    redisConnects.mockRestore();
    embeddings.release();
    for (const t of apps.reverse()) await t.close().catch(() => undefined);
    await embeddings.stop();
    await dropDatabase(url);
  });

  it('ingests an upload on the in-process queue, with progress, and makes it searchable', async () => {
    const t = await app();
    expect(t.config.redis.url).toBeNull();
    expect((t.app.get(IngestJobs) as unknown as { queue: unknown }).queue).toBeInstanceOf(InProcessIngestQueue);
    const admin = adminAuth(t);
    // The worker's embeddings request is held: the job is seen under way (parsed, its leaves being embedded).
    embeddings.held = true;
    const asked = embeddings.nextRequest();
    const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(admin).attach('file', manual('Heron kettle'), 'heron.md').expect(202);
    const { id } = res.body.job;
    await asked;
    const stream = await openSse(`${await t.listen()}/api/knowledge/jobs/${id}/events`, { headers: admin });
    await stream.waitFor((e) => e.event === 'job' && e.data.status === 'active');
    embeddings.release();
    const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed', 'cancelled'].includes(e.data.status));
    stream.close();
    // The embedding stage's progress reaches the stream from the queue's progress event (the job was seen active before it).
    const stages = stream.events.filter((e) => e.event === 'job' && e.data.stage).map((e) => e.data.stage as string);
    expect(stages).toContain('embedding');
    expect({ status: last.data.status, document_id: last.data.document_id, error: last.data.error }).toEqual({ status: 'completed', document_id: id, error: null });
    expect(await search(t, 'Heron kettle manual')).toContain('heron.md');
    expect(redisConnects).not.toHaveBeenCalled();
  });

  it('takes up, at start, a job the previous process left unfinished', async () => {
    // A process without a worker stores and acknowledges the upload, then stops: the job is only in PostgreSQL now.
    const before = await app({ KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    const res = await request(before.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(before)).attach('file', manual('Osprey lamp'), 'osprey.md').expect(202);
    const { id } = res.body.job;
    await close(before);

    // The reconciler's periodic rounds (every lock period) come too late to count: the job is taken up at start.
    const after = await app({ KNOWLEDGE_INGEST_CONCURRENCY: '1', KNOWLEDGE_INGEST_LOCK_MS: '600000' });
    expect(await after.app.get(IngestJobs).waitUntilFinished(id)).toMatchObject({ status: 'completed', document_id: id, attempts: 1 });
    expect(await search(after, 'Osprey lamp manual')).toContain('osprey.md');
    expect(redisConnects).not.toHaveBeenCalled();
  });

  it('(the spy sees them) opens Redis connections for its BullMQ queue when REDIS_URL is set', async () => {
    const withRedis = await app({ REDIS_URL: TEST_REDIS_URL });
    expect(withRedis.config.redis.url).not.toBeNull();
    expect(redisConnects).toHaveBeenCalled();
    await close(withRedis);
  });
});
