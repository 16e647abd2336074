import http from 'node:http';
import pg from 'pg';
import request from 'supertest';
import { adminAuth } from './support/admin.js';
import { waitUntil } from './support/service-process.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { IndexIdentity } from '../src/knowledge/index/index-identity.js';
import { reindexKnowledge } from '../src/knowledge/index/reindex.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { openSse } from './support/sse-client.js';

/** Review of issue 14: each test states the behaviour it expects; a failing one reproduces a defect. */
const text = (label: string) => Buffer.from(`# ${label}\n${Array.from({ length: 30 }, (_, i) => `The ${label} manual, part ${i}.`).join('\n')}`, 'utf8');

describe('Ingest jobs against hostile clients and races', () => {
  const databases: string[] = [];
  const apps: TestApp[] = [];
  const app = async (env: Record<string, string>) => {
    const created = await createTestApp({ KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_INGEST_LOCK_MS: '1000', ...env });
    apps.push(created);
    return created;
  };
  const database = async (url: string) => {
    await ensureDatabase(url);
    databases.push(url);
    return url;
  };

  afterAll(async () => {
    for (const created of apps.reverse()) await created.close().catch(() => undefined);
    for (const url of databases) await dropDatabase(url);
  });

  it("does not let another deployment's worker take a job (databases 'x.a' and 'x_a' on one Redis)", async () => {
    const base = new URL(freshDatabaseUrl());
    const named = (suffix: string) => {
      const url = new URL(base);
      url.pathname = `${base.pathname}${suffix}`;
      return url.toString();
    };
    // Two deployments on one Redis: the queue name is made of the database name with '.' mapped to '_'.
    const ours = await database(named('.a'));
    const theirs = await database(named('_a'));
    const front = await app({ DATABASE_URL: ours, KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    await app({ DATABASE_URL: theirs, KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    const res = await request(front.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(front)).attach('file', text('Fennel'), 'fennel.md').expect(202);
    const { id } = res.body.job;
    // Our own worker arrives only now.
    const worker = await app({ DATABASE_URL: ours, KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    const stream = await openSse(`${await worker.listen()}/api/knowledge/jobs/${id}/events`, { headers: adminAuth(worker) });
    const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status));
    stream.close();
    expect(last.data).toMatchObject({ status: 'completed', document_id: id });
  });

  it('lets a wait=true client leave without an error in the log, and stops waiting for it', async () => {
    const lines: string[] = [];
    let heardLeave!: () => void;
    const leaveLogged = new Promise<void>((resolve) => (heardLeave = resolve));
    const destination = {
      write: (line: string) => {
        lines.push(line);
        // The request's own log line, written when its response closes.
        if (/"statusCode":|no longer waited/.test(line) && line.includes('/api/knowledge/documents')) heardLeave();
      },
    };
    const t = await createTestApp(
      { DATABASE_URL: await database(freshDatabaseUrl()), KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_INGEST_CONCURRENCY: '0', LOG_LEVEL: 'info' },
      destination as never,
    );
    apps.push(t);
    const jobs = t.app.get(IngestJobs) as unknown as {
      watchers: { listeners: Map<string, Set<unknown>> };
      watch: (id: string, listener: (job: unknown) => void) => () => void;
    };
    // The wait=true handler watches the job, and stops watching when it no longer waits.
    let watched!: () => void;
    let unwatched!: () => void;
    const watching = new Promise<void>((resolve) => (watched = resolve));
    const stopped = new Promise<void>((resolve) => (unwatched = resolve));
    const watch = jobs.watch.bind(jobs);
    jobs.watch = (id, listener) => {
      const stop = watch(id, listener);
      watched();
      return () => {
        stop();
        unwatched();
      };
    };
    const base = new URL(await t.listen());
    const boundary = 'review-boundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="leave.md"\r\nContent-Type: text/markdown\r\n\r\n`),
      text('Lovage'),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const req = http.request({
      host: base.hostname,
      port: base.port,
      method: 'POST',
      path: '/api/knowledge/documents?wait=true',
      headers: { ...adminAuth(t), 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': body.length },
    });
    req.on('error', () => undefined);
    req.end(body);
    await watching;
    req.destroy();
    await stopped;
    expect(jobs.watchers.listeners.size).toBe(0);
    await leaveLogged;
    const errors = lines.filter((line) => JSON.parse(line).level >= 50);
    process.stdout.write(`wait=true left: ${errors.length} error lines ${errors.map((l) => l.slice(0, 300)).join('\n')}\n`);
    expect(errors).toEqual([]);
  });

  it('does not bring back a document deleted while its job was still finishing (bulk load, indexing stage)', async () => {
    const t = await app({
      DATABASE_URL: await database(freshDatabaseUrl()),
      RAG_DENSE_BACKEND: 'pgvector',
      KNOWLEDGE_BULK_LEAVES: '1',
      KNOWLEDGE_CHUNK_SIZES: '220',
      KNOWLEDGE_CHUNK_OVERLAP: '0',
    });
    const server = t.app.getHttpServer();
    // Another instance's index maintenance: the job's bulk load waits for the lock, its document already committed.
    const holder = new pg.Client({ connectionString: t.config.database.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7283046215530719)');
      const res = await request(server).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Borage'), 'borage.md').expect(202);
      const { id } = res.body.job;
      const stream = await openSse(`${await t.listen()}/api/knowledge/jobs/${id}/events`, { headers: adminAuth(t) });
      await stream.waitFor((e) => e.event === 'job' && e.data.stage === 'indexing');
      await request(server).delete(`/api/knowledge/documents/${id}`).set(adminAuth(t)).expect(200);
      await holder.query('SELECT pg_advisory_unlock(7283046215530719)');
      const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed', 'cancelled'].includes(e.data.status));
      stream.close();
      const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents');
      process.stdout.write(`deleted while indexing: job ${JSON.stringify(last.data)}; documents now ${n}\n`);
      expect({ documents: n, status: last.data.status, attempts: last.data.attempts }).toEqual({ documents: 0, status: 'cancelled', attempts: 1 });
    } finally {
      await holder.end();
    }
  });

  it('knowledge:reindex leaves no leaf in the old space when an old-space ingest commits during it', async () => {
    const t = await app({ DATABASE_URL: await database(freshDatabaseUrl()), KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    const server = t.app.getHttpServer();
    await request(server).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).attach('file', text('Chicory'), 'chicory.md').expect(201);
    const locker = new pg.Client({ connectionString: t.config.database.url });
    await locker.connect();
    try {
      // Holds the state row: the next ingest waits at its check before commit, its leaves written but not committed.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM knowledge_index_state WHERE id = 1 FOR UPDATE');
      const res = await request(server).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Endive'), 'endive.md').expect(202);
      const waitingBackends = async () =>
        (await locker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n;
      await waitUntil(async () => (await waitingBackends()) === 1, 'the ingest to wait for the state row', 60_000);
      const identity = t.app.get(IndexIdentity);
      const reindexing = reindexKnowledge(t.dataSource, t.app.get(EmbeddingProvider), { ...identity.configured, model: `${identity.configured.model}-next` });
      // The re-index has passed every committed leaf and waits to move the space.
      await waitUntil(async () => (await waitingBackends()) === 2, 'the re-index to wait for the state row too', 60_000);
      await locker.query('COMMIT');
      await reindexing;
      const stream = await openSse(`${await t.listen()}/api/knowledge/jobs/${res.body.job.id}/events`, { headers: adminAuth(t) });
      const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status));
      stream.close();
      const [{ stale }] = await t.dataSource.query(
        'SELECT count(*)::int AS stale FROM knowledge_chunks WHERE is_leaf AND space_id IS DISTINCT FROM (SELECT space_id FROM knowledge_index_state WHERE id = 1)',
      );
      process.stdout.write(`reindex race: job ${last.data.status}; leaves outside the knowledge base's space: ${stale}\n`);
      expect(stale).toBe(0);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('does not keep watching a job for an SSE client that left while the job was being looked up', async () => {
    const t = await app({ DATABASE_URL: await database(freshDatabaseUrl()), KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Sorrel'), 'sorrel.md').expect(202);
    const { id } = res.body.job;
    const jobs = t.app.get(IngestJobs) as unknown as {
      watchers: { listeners: Map<string, Set<unknown>>; pollers: Map<string, NodeJS.Timeout> };
      find: (jobId: string) => Promise<unknown>;
    };
    // The handler decides whether to watch as soon as its lookup returns: a macrotask after it, the decision is made.
    const find = jobs.find.bind(jobs);
    let lookedUp!: () => void;
    const lookupReturned = new Promise<void>((resolve) => (lookedUp = resolve));
    jobs.find = async (jobId) => {
      const job = await find(jobId);
      if (jobId === id) setImmediate(lookedUp);
      return job;
    };
    const base = new URL(await t.listen());

    // The job lookup waits behind a table lock, so the client is gone before the handler attaches its 'close' listener.
    const locker = new pg.Client({ connectionString: t.config.database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE knowledge_ingest_jobs IN ACCESS EXCLUSIVE MODE');
      const req = http.get({ host: base.hostname, port: base.port, path: `/api/knowledge/jobs/${id}/events`, headers: adminAuth(t) });
      req.on('error', () => undefined);
      const waiting = async () =>
        (await locker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n > 0;
      await waitUntil(waiting, 'the awaited database state', 60_000);
      req.destroy();
      const server = t.app.getHttpServer() as http.Server;
      const connections = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
      // Only the supertest upload could remain; the SSE socket is closed on the server.
      await waitUntil(async () => (await connections()) === 0, 'the SSE connection to close', 60_000);
    } finally {
      await locker.query('COMMIT').catch(() => undefined);
      await locker.end();
    }
    await lookupReturned;
    // A leak: a watcher (listener + 1 s PostgreSQL poller) registered for a client that is gone.
    const leaked = jobs.watchers.listeners.has(id) || jobs.watchers.pollers.has(id);
    expect({ leaked, listeners: jobs.watchers.listeners.get(id)?.size ?? 0 }).toEqual({ leaked: false, listeners: 0 });
  });
});
