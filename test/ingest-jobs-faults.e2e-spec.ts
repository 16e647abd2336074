import type { Job, Worker } from 'bullmq';
import request from 'supertest';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { OwnPostgres } from './support/own-postgres.js';
import { Redis } from 'ioredis';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { openSse } from './support/sse-client.js';
import { FakeEmbeddingsServer } from './support/fake-embeddings-server.js';

/** Review of issue 14: an acknowledged upload and a short PostgreSQL outage. */

const text = Buffer.from(`# Basil\n${Array.from({ length: 30 }, (_, i) => `The Basil manual, part ${i}.`).join('\n')}`, 'utf8');

describe('Ingest jobs through a PostgreSQL outage and a lost lock', () => {
  const postgres = new OwnPostgres();
  let embeddings: FakeEmbeddingsServer;
  let t: TestApp | undefined;

  beforeAll(async () => {
    embeddings = await new FakeEmbeddingsServer().start();
    await postgres.start();
  });
  afterAll(async () => {
    embeddings.release();
    await t?.close().catch(() => undefined);
    await embeddings.stop();
    await postgres.destroy();
  });

  it('does not fail an acknowledged upload for good because PostgreSQL was away for a few seconds', async () => {
    const url = await postgres.createDatabase('review_ingest');
    t = await createTestApp({
      DATABASE_URL: url,
      DATABASE_CREATE_IF_MISSING: 'false',
      KNOWLEDGE_SEED_ON_START: 'false',
      ...embeddings.env(),
      KNOWLEDGE_INGEST_LOCK_MS: '1000',
    });
    const admin = adminAuth(t);
    const worker = (t.app.get(IngestJobs) as unknown as { queue: { worker: Worker } }).queue.worker;
    embeddings.held = true;
    const asked = embeddings.nextRequest();
    const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(admin).attach('file', text, 'basil.md').expect(202);
    const { id } = res.body.job;
    await asked; // the worker is embedding it

    const lastAttemptFailed = new Promise<Job>((resolve) =>
      worker.on('failed', (job) => {
        if (job && job.id === id && job.attemptsMade >= (job.opts.attempts ?? 1)) resolve(job);
      }),
    );
    const outageStarted = Date.now();
    await postgres.stop('fast');
    embeddings.release();
    const failedJob = await lastAttemptFailed;
    await postgres.start();
    const outageMs = Date.now() - outageStarted;
    // Recorded for the report: how long the outage was when the queue gave the job up.
    process.stdout.write(`PostgreSQL away ${outageMs} ms; BullMQ gave up after ${failedJob.attemptsMade} attempts: ${failedJob.failedReason}\n`);

    const stream = await openSse(`${await t.listen()}/api/knowledge/jobs/${id}/events`, { headers: admin });
    const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status));
    stream.close();
    const [{ has_content }] = await t.dataSource.query('SELECT content IS NOT NULL AS has_content FROM knowledge_ingest_jobs WHERE id = $1', [id]);
    expect({ status: last.data.status, error: last.data.error, has_content }).toEqual({ status: 'completed', error: null, has_content: false });
  });

  it('does not let a worker that lost its lock overwrite the job another worker completed', async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    const env = {
      DATABASE_URL: url,
      KNOWLEDGE_SEED_ON_START: 'false',
      ...embeddings.env(),
      KNOWLEDGE_INGEST_LOCK_MS: '1000',
    };
    const slow = await createTestApp(env);
    let fast: TestApp | undefined;
    const redis = new Redis(slow.config.redis.url!); // the app's BullMQ queue's Redis
    try {
      embeddings.held = true;
      const admin = adminAuth(slow);
      const asked = embeddings.nextRequest();
      const res = await request(slow.app.getHttpServer())
        .post('/api/knowledge/documents')
        .set(admin)
        .attach('file', Buffer.from(`${text}\nlost lock`), 'lost.md')
        .expect(202);
      const { id } = res.body.job;
      await asked; // the slow worker is embedding it
      // Its lock lapses as after a long pause (GC, a blocked event loop, a Redis failover): another worker takes the job.
      const locks = await redis.keys(`rag:*:${id}:lock`);
      expect(locks).toHaveLength(1);
      await redis.del(locks[0]);
      embeddings.held = false;
      fast = await createTestApp(env);
      const row = async () => (await slow.dataSource.query('SELECT status, attempts, error_code FROM knowledge_ingest_jobs WHERE id = $1', [id]))[0];
      expect(await fast.app.get(IngestJobs).waitUntilFinished(id)).toMatchObject({ status: 'completed', attempts: 2 });
      // Now the slow worker's embeddings request fails. Its attempt has ended, and written all it would, when BullMQ
      // hears of it: a 'failed' event, or (its lock gone) an error for the job's failure it cannot record.
      const slowWorker = (slow.app.get(IngestJobs) as unknown as { queue: { worker: Worker } }).queue.worker;
      const slowAttemptEnded = new Promise<string>((resolve) => {
        slowWorker.on('failed', (job) => job?.id === id && resolve(`failed: ${job?.failedReason}`));
        slowWorker.on('error', (error) => error.message.includes(id) && resolve(`error: ${error.message}`));
      });
      embeddings.failHeld();
      process.stdout.write(`lost lock: the slow worker's attempt ended (${await slowAttemptEnded})\n`);
      const final = await row();
      process.stdout.write(`lost lock: the job row after the slow worker failed: ${JSON.stringify(final)}\n`);
      expect(final).toMatchObject({ status: 'completed', error_code: null });
    } finally {
      embeddings.release();
      redis.disconnect();
      await fast?.close().catch(() => undefined);
      await slow.close().catch(() => undefined);
      await dropDatabase(url);
    }
  });
});
