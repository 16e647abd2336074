import request from 'supertest';
import { DataSource } from 'typeorm';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { waitUntil } from './support/service-process.js';
import { seedLeaves } from './support/seed-leaves.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

const LEAVES = 100_000;
const DENSE_LOAD = /SELECT id::text, collection_id::text, CASE WHEN .* THEN embedding END AS embedding FROM knowledge_chunks/s;

/**
 * After a restart the in-memory dense index loads in the background: the
 * instance is live at once (/health 200), says it is not ready
 * (/health/ready 503) until the index is loaded, and serves knowledge
 * searches meanwhile from the full-text ranking instead of making them wait.
 */
describe('Readiness after a start with many leaves', () => {
  let url: string;
  const env = () => ({ DATABASE_URL: url, RAG_DENSE_BACKEND: 'memory', KNOWLEDGE_SEED_ON_START: 'false' });

  beforeAll(async () => {
    url = freshDatabaseUrl();
    await ensureDatabase(url);
    const first = await createTestApp(env()); // applies the migrations
    try {
      await first.app.get(DocumentsService).ingest('larkspur.txt', Buffer.from('The larkspur manual: how to reset the larkspur router.'), 'test');
    } finally {
      await first.close();
    }
    await seedLeaves(url, LEAVES);
  });
  afterAll(async () => {
    await dropDatabase(url);
  });

  it('answers /health 200 and /health/ready 503 while the index loads, serves searches meanwhile, then is ready', async () => {
    // The load's row statements wait at this gate, however fast the machine: the test sees the instance mid-load.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let heldLoads = 0;
    const restore = beforeEachLoadStatement(async () => {
      heldLoads += 1;
      await gate;
    });
    let t: TestApp | undefined;
    try {
      t = await createTestApp(env(), undefined, [], { awaitDenseIndex: false });
      const server = t.app.getHttpServer();
      await waitUntil(() => heldLoads > 0, 'the start-up load of the dense index');

      // Live at once; `ok` once its cache client has connected, which the readiness below needs too.
      expect((await request(server).get('/health')).status).toBe(200);
      await waitUntil(async () => (await request(server).get('/health')).body.status === 'ok', 'the cache connected');
      const loading = await request(server).get('/health/ready');
      expect(loading.status).toBe(503);
      expect(loading.body).toMatchObject({
        status: 'not_ready',
        details: { database: { status: 'up' }, cache: { status: 'up' }, dense_index: { status: 'down', backend: 'memory', leaves_loaded: 0, leaves_total: LEAVES + 1 } },
      });

      // Served while the load is held: it does not wait for the index (it would wait forever here).
      const user = t.auth(uniqueUser('readiness'));
      const during = await request(server).post('/api/knowledge/search').set(user).send({ query: 'larkspur manual' });
      expect(during.status).toBe(200);
      expect(during.body.chunks.map((chunk: { source: string }) => chunk.source)).toContain('larkspur.txt');
      expect(during.body.rag_trace.dense_skipped).toMatch(/^the in-memory dense index is still loading \(0 of 100001 leaves\)$/);

      open();
      await waitUntil(async () => (await request(server).get('/health/ready')).status === 200, '/health/ready 200', 100_000, 50);
      const ready = await request(server).get('/health/ready');
      expect(ready.body).toMatchObject({ status: 'ready', details: { dense_index: { status: 'up', backend: 'memory' } } });
      const after = await request(server).post('/api/knowledge/search').set(user).send({ query: 'larkspur manual' });
      expect(after.status).toBe(200);
      expect(after.body.rag_trace.dense_skipped).toBeNull();
      expect(after.body.chunks.map((chunk: { source: string }) => chunk.source)).toContain('larkspur.txt');
    } finally {
      restore();
      open();
      await t?.close();
    }
  });

  it('tries the load again when it fails, and gets ready without a knowledge query to start it', async () => {
    let failed = 0;
    const restore = beforeEachLoadStatement(async () => {
      if (failed === 0) {
        failed += 1;
        throw new Error('the first page failed');
      }
    });
    let t: TestApp | undefined;
    try {
      t = await createTestApp(env(), undefined, [], { awaitDenseIndex: false });
      const server = t.app.getHttpServer();
      await waitUntil(async () => (await request(server).get('/health/ready')).status === 200, '/health/ready 200', 100_000, 50);
      expect(failed).toBe(1);
    } finally {
      restore();
      await t?.close();
    }
  });
});

/** Runs `before` ahead of each row statement of the dense index's load, in every data source; returns the undo. */
function beforeEachLoadStatement(before: () => Promise<void>): () => void {
  const createQueryRunner = DataSource.prototype.createQueryRunner;
  DataSource.prototype.createQueryRunner = function (this: DataSource, ...args: Parameters<typeof createQueryRunner>) {
    const runner = createQueryRunner.apply(this, args);
    const run = runner.query;
    runner.query = async function (this: typeof runner, ...queryArgs: unknown[]) {
      if (DENSE_LOAD.test(String(queryArgs[0]))) await before();
      return (run as (...a: unknown[]) => Promise<unknown>).apply(this, queryArgs);
    } as typeof run;
    return runner;
  };
  return () => {
    DataSource.prototype.createQueryRunner = createQueryRunner;
  };
}
