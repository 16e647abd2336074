import { jest } from '@jest/globals';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { IngestJobsRepository } from '../src/knowledge/ingest/jobs/ingest-jobs.repository.js';
import { FakeEmbeddingsServer } from './support/fake-embeddings-server.js';
import { OwnRedis } from './support/own-redis.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { describeWithPgvector } from './support/pgvector.js';

/**
 * Review of the deferred HNSW build: bulk-loaded leaves whose build was left to a later job become dense-searchable
 * (knowledge_index_state.dense_epoch covering them) once no later job is going to build them. Each test failed
 * before its fix.
 */

/** Reconciler round every second. */
const LOCK_MS = 1000;

function document(word: string, count: number): Buffer {
  const lines = Array.from({ length: count }, (_, i) => `Note ${i} on the ${word} lantern: the ${word} glows in shade ${i * 7919} of router blue.`);
  return Buffer.from(lines.join('\n'), 'utf8');
}

describeWithPgvector('deferred HNSW builds of bulk loads', () => {
  let embeddings: FakeEmbeddingsServer;
  const databases: string[] = [];
  const apps: TestApp[] = [];
  const redis = new OwnRedis();

  const settings = (url: string) => ({
    DATABASE_URL: url,
    RAG_DENSE_BACKEND: 'pgvector',
    KNOWLEDGE_SEED_ON_START: 'false',
    KNOWLEDGE_CHUNK_SIZES: '220',
    KNOWLEDGE_CHUNK_OVERLAP: '0',
    KNOWLEDGE_BULK_LEAVES: '1',
    KNOWLEDGE_INGEST_LOCK_MS: String(LOCK_MS),
    ...embeddings.env(),
    LLM_TIMEOUT_MS: '120000',
  });
  const database = async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    databases.push(url);
    return url;
  };
  /** The log's messages of the last app made. */
  let messages: string[] = [];
  let waiting: Array<{ text: string; resolve: () => void }> = [];
  const deferred = () => messages.some((msg) => msg.includes('index build left to a later bulk load'));
  /** Resolves once the last app made has logged a message containing `text`. */
  const logged = (text: string) =>
    new Promise<void>((resolve) => {
      if (messages.some((msg) => msg.includes(text))) resolve();
      else waiting.push({ text, resolve });
    });
  const reconcilerBuilt = () => logged('bulk-loaded leaves without an index');
  const app = async (env: Record<string, string>) => {
    messages = [];
    waiting = [];
    const destination = {
      write: (line: string) => {
        const msg = String(JSON.parse(line).msg);
        messages.push(msg);
        for (const waiter of waiting.filter((w) => msg.includes(w.text))) waiter.resolve();
      },
    };
    const created = await createTestApp({ ...env, LOG_LEVEL: 'info' }, destination as never);
    apps.push(created);
    return created;
  };
  /** Leaves of bulk loads that no HNSW index (no dense search) covers yet. */
  const uncovered = async (t: TestApp) => {
    const [row] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM knowledge_chunks WHERE is_leaf AND dense_epoch > (SELECT dense_epoch FROM knowledge_index_state WHERE id = 1)`,
    );
    return Number(row.n);
  };
  const status = async (t: TestApp, id: string) => (await t.dataSource.query('SELECT status FROM knowledge_ingest_jobs WHERE id = $1', [id]))[0]?.status as string | undefined;

  beforeAll(async () => {
    embeddings = await new FakeEmbeddingsServer().start();
  });
  afterAll(async () => {
    embeddings.release();
    if (redis.running) await redis.resume().catch(() => undefined);
    for (const created of apps.reverse()) await created.close().catch(() => undefined);
    await redis.destroy();
    await embeddings.stop();
    for (const url of databases) await dropDatabase(url);
  });

  it('builds the index of a load that deferred to a small job even while an unrelated job is still under way', async () => {
    const url = await database();
    const t = await app({ ...settings(url), KNOWLEDGE_INGEST_CONCURRENCY: '2' });
    const jobs = t.app.get(IngestJobs);
    // A job that stays under way: its embeddings request is slow (a large document, a rate-limited API).
    embeddings.held = true;
    const asked = embeddings.nextRequest();
    const slow = (await jobs.submit('slow.txt', document('slowpoke', 5), 'test')).job!.id;
    await asked;
    embeddings.held = false;
    // A bulk load followed by a small upload: the load leaves its build to the small one, which is no bulk load.
    const loaded = (await jobs.submit('aurora.txt', document('aurora', 60), 'test')).job!.id;
    const small = (await jobs.submit('basalt.txt', document('basalt', 1), 'test')).job!.id;
    expect(await jobs.waitUntilFinished(loaded)).toMatchObject({ status: 'completed' });
    expect(await jobs.waitUntilFinished(small)).toMatchObject({ status: 'completed' });
    expect(await status(t, slow)).toBe('active');
    expect(deferred()).toBe(true);

    // Bulk loads have paused: the reconciler builds, with the slow job still under way.
    await reconcilerBuilt();
    expect(await uncovered(t)).toBe(0);
    expect(await status(t, slow)).toBe('active');
    embeddings.release();
  });

  it('builds the index of a load that deferred to a queued job while Redis does not answer', async () => {
    await redis.start();
    const url = await database();
    const t = await app({ ...settings(url), REDIS_URL: redis.url(12), KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    const jobs = t.app.get(IngestJobs);
    embeddings.held = true;
    const asked = embeddings.nextRequest();
    const loaded = (await jobs.submit('cobalt.txt', document('cobalt', 60), 'test')).job!.id;
    const queued = (await jobs.submit('dune.txt', document('dune', 60), 'test')).job!.id;
    await asked; // the worker is embedding the load; the other upload waits for the worker
    // Once the queued upload is a lock period old, every reconciler round looks it up in the queue.
    const queue = (jobs as unknown as { queue: { hold: (id: string) => Promise<unknown> } }).queue;
    const lookedUp = new Promise<void>((resolve) => {
      const hold = queue.hold.bind(queue);
      queue.hold = (id: string) => {
        if (id === queued) resolve();
        return hold(id);
      };
    });
    await lookedUp;
    // Redis stops answering (a stopped process, a partition without resets): connections stay open, replies never come.
    await redis.pause();
    embeddings.release();
    // The load completes in PostgreSQL and leaves its build to the queued job, which cannot start.
    expect(await jobs.waitUntilFinished(loaded)).toMatchObject({ status: 'completed' });
    expect(await status(t, queued)).toBe('queued');
    expect(deferred()).toBe(true);

    // No job is under way anywhere: the reconciler should build the index of the load's leaves.
    try {
      await reconcilerBuilt();
      expect(await uncovered(t)).toBe(0);
    } finally {
      await redis.resume();
    }
  });

  it('does not fail a job whose document is stored because the after-commit deferral check failed', async () => {
    const url = await database();
    const t = await app({ ...settings(url), KNOWLEDGE_INGEST_CONCURRENCY: '1', KNOWLEDGE_INGEST_ATTEMPTS: '1' });
    const jobs = t.app.get(IngestJobs);
    // The connection drops at that moment (a failover, a PgBouncer restart): the check's query fails.
    const { jobs: repository } = jobs as unknown as { jobs: IngestJobsRepository };
    const check = jest.spyOn(repository, 'otherJobsQueued').mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
    const id = (await jobs.submit('ember.txt', document('ember', 60), 'test')).job!.id;
    const finished = await jobs.waitUntilFinished(id);
    expect(check).toHaveBeenCalledTimes(1);
    check.mockRestore();
    const [stored] = await t.dataSource.query('SELECT id FROM knowledge_documents WHERE id = $1', [id]);
    expect({ storedDocument: !!stored, status: finished.status, error: finished.error }).toEqual({
      storedDocument: true,
      status: 'completed',
      error: null,
    });
  });
});
