import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { OwnRedis } from './support/own-redis.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { openSse } from './support/sse-client.js';
import { makePdf } from './support/make-pdf.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { ingestFolderAsJobs } from '../scripts/folder-ingest.js';
import { FakeEmbeddingsServer } from './support/fake-embeddings-server.js';

const text = (label: string) => Buffer.from(`# ${label}\n${Array.from({ length: 40 }, (_, i) => `The ${label} manual, part ${i}: 说明书第${i}节。`).join('\n')}`, 'utf8');

describe('Ingest jobs: 202 at once, a queue on Redis, workers on every instance', () => {
  const databases: string[] = [];
  const apps: TestApp[] = [];
  const ownDatabase = async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    databases.push(url);
    return url;
  };
  const app = async (env: Record<string, string>) => {
    const created = await createTestApp({ KNOWLEDGE_SEED_ON_START: 'false', ...env });
    apps.push(created);
    return created;
  };
  const bases = new Map<TestApp, string>();
  const baseOf = async (t: TestApp) => bases.get(t) ?? bases.set(t, await t.listen()).get(t)!;
  const job = async (t: TestApp, id: string) => (await request(t.app.getHttpServer()).get(`/api/knowledge/jobs/${id}`).set(adminAuth(t)).expect(200)).body;
  const jobRow = async (t: TestApp, id: string) =>
    (await t.dataSource.query('SELECT status, attempts FROM knowledge_ingest_jobs WHERE id = $1', [id]))[0] as { status: string; attempts: number };

  const closeApps = async (...closing: TestApp[]) => {
    for (const created of closing) {
      apps.splice(apps.indexOf(created), 1);
      await created.close();
    }
  };

  afterAll(async () => {
    for (const created of apps.reverse()) await created.close().catch(() => undefined);
    for (const url of databases) await dropDatabase(url);
  });

  describe('with the local embeddings', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await app({ DATABASE_URL: await ownDatabase() });
    });

    it('answers 202 with the job, streams its progress by stage, and stores the document', async () => {
      const base = await baseOf(t);
      const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Zephyr kettle'), 'zephyr.md');
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ document: null, duplicate: false, job: { filename: 'zephyr.md', attempts: 0 } });
      const { id } = res.body.job;
      expect(res.headers.location).toBe(`/api/knowledge/jobs/${id}`);

      const stream = await openSse(`${base}/api/knowledge/jobs/${id}/events`, { headers: adminAuth(t) });
      const last = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status));
      const events = stream.events.filter((e) => e.event === 'job').map((e) => e.data);
      expect(last.data).toMatchObject({ id, status: 'completed', attempts: 1, error: null, duplicate: false, document_id: id });
      // The stages are seen in order (a fast job may skip some between two events).
      const order = ['parsing', 'embedding', 'storing', 'indexing'];
      const stages = events.map((e) => e.stage).filter((s): s is string => !!s);
      expect(stages).toEqual([...stages].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
      await stream.ended;

      expect(await job(t, id)).toMatchObject({ status: 'completed', stage: null, document_id: id, finished_at: expect.any(String) });
      const documents = (await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(adminAuth(t)).expect(200)).body.documents;
      expect(documents.find((d: { id: string }) => d.id === id)).toMatchObject({ filename: 'zephyr.md', leaf_count: expect.any(Number) });
      const [{ content }] = await t.dataSource.query('SELECT content FROM knowledge_ingest_jobs WHERE id = $1', [id]);
      expect(content).toBeNull();
      const listed = (await request(t.app.getHttpServer()).get('/api/knowledge/jobs').set(adminAuth(t)).expect(200)).body.jobs;
      expect(listed[0]).toMatchObject({ id, status: 'completed' });

      // The same content again: the stored document, at once, without a job.
      const again = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Zephyr kettle'), 'copy.md');
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ job: null, duplicate: true, document: { id, filename: 'zephyr.md' } });
    });

    it('refuses what it can tell at once, fails a job on unreadable content without retrying, and answers wait=true as the job ended', async () => {
      const server = t.app.getHttpServer();
      const jobsBefore = (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_ingest_jobs'))[0].n;
      await request(server).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', Buffer.from('NUL\u0000here'), 'nul.txt').expect(422);
      await request(server).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', Buffer.from('x'), 'binary.exe').expect(415);
      await request(server).post('/api/knowledge/documents').set(t.auth(uniqueUser())).attach('file', text('user'), 'user.md').expect(403);
      expect((await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_ingest_jobs'))[0].n).toBe(jobsBefore);

      // A PDF header on garbage: only parsing can tell, so the job fails, once.
      const broken = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from('not really a pdf '.repeat(20))]);
      const queued = await request(server).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', broken, 'broken.pdf').expect(202);
      const stream = await openSse(`${await baseOf(t)}/api/knowledge/jobs/${queued.body.job.id}/events`, { headers: adminAuth(t) });
      const failed = await stream.waitFor((e) => e.event === 'job' && e.data.status === 'failed');
      expect(failed.data).toMatchObject({ attempts: 1, document_id: null, error: { code: 'unreadable_document', message: expect.stringContaining('broken.pdf') } });

      const waited = await request(server)
        .post('/api/knowledge/documents?wait=true')
        .set(adminAuth(t))
        .attach('file', Buffer.concat([broken, Buffer.from('2')]), 'broken-2.pdf');
      expect(waited.status).toBe(422);
      expect(waited.body).toMatchObject({ code: 'unreadable_document', job_id: expect.any(String) });
      const stored = await request(server)
        .post('/api/knowledge/documents?wait=true')
        .set(adminAuth(t))
        .attach('file', makePdf(['Page one of the Orbit lamp.']), 'orbit.pdf');
      expect(stored.status).toBe(201);
      expect(stored.body).toMatchObject({ duplicate: false, job: { status: 'completed' }, document: { filename: 'orbit.pdf', page_count: 1 } });
    });

    it('knowledge:ingest submits a folder as jobs and shows their progress', async () => {
      const folder = mkdtempSync(path.join(os.tmpdir(), 'ingest-folder-'));
      writeFileSync(path.join(folder, 'kite.md'), text('Kite drone'));
      writeFileSync(path.join(folder, '风筝.txt'), text('风筝无人机'));
      writeFileSync(path.join(folder, 'broken.pdf'), Buffer.from('%PDF-1.4 nothing else'));
      writeFileSync(path.join(folder, 'ignored.bin'), Buffer.from('not a document'));
      let printed = '';
      const output = new Writable({
        write(chunk, _encoding, callback) {
          printed += String(chunk);
          callback();
        },
      });
      const result = await ingestFolderAsJobs(t.app.get(IngestJobs), folder, output);
      expect(result.failed).toBe(1);
      expect(result.lines).toHaveLength(3);
      expect(result.lines).toEqual(expect.arrayContaining(['added  kite.md', 'added  风筝.txt', expect.stringMatching(/^failed {2}broken\.pdf: .*could not be read as a PDF/)]));
      // The bars, as a terminal without a TTY gets them: each file reaches 100 %.
      expect(printed).toMatch(/100% \| kite\.md \| completed/);
      expect(printed).toMatch(/100% \| 风筝\.txt \| completed/);
      const rows = await t.dataSource.query(`SELECT filename, status FROM knowledge_ingest_jobs WHERE created_by = 'cli:ingest' ORDER BY filename`);
      expect(rows).toEqual([
        { filename: 'broken.pdf', status: 'failed' },
        { filename: 'kite.md', status: 'completed' },
        { filename: '风筝.txt', status: 'completed' },
      ]);
    });

    it('answers forged and foreign job ids with 400, 403 and 404', async () => {
      const server = t.app.getHttpServer();
      for (const forged of ['not-a-uuid', '%00', '1%27%20OR%201=1', 'a'.repeat(5000)]) {
        await request(server).get(`/api/knowledge/jobs/${forged}`).set(adminAuth(t)).expect(400);
        await request(server).get(`/api/knowledge/jobs/${forged}/events`).set(adminAuth(t)).expect(400);
      }
      await request(server).get('/api/knowledge/jobs/6f1c1d8e-0000-4000-8000-000000000000').set(adminAuth(t)).expect(404);
      await request(server).get('/api/knowledge/jobs/6f1c1d8e-0000-4000-8000-000000000000/events').set(adminAuth(t)).expect(404);
      await request(server).get('/api/knowledge/jobs').set(t.auth(uniqueUser())).expect(403);
    });
  });

  it('leaves jobs to the instances that take them: KNOWLEDGE_INGEST_CONCURRENCY=0 takes none', async () => {
    const database = await ownDatabase();
    const front = await app({ DATABASE_URL: database, KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    const res = await request(front.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(front)).attach('file', text('Quill pen'), 'quill.md').expect(202);
    const { id } = res.body.job;
    // Nothing takes it while only the front instance runs: it is queued in BullMQ, waiting.
    expect((await job(front, id)).status).toBe('queued');
    const worker = await app({ DATABASE_URL: database, KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    const finished = await waitForStatus(front, id, 'completed');
    expect(finished).toMatchObject({ status: 'completed', attempts: 1, document_id: id });
    await closeApps(front, worker);
  });

  it('keeps an upload acknowledged while Redis is away and queues it when Redis is back', async () => {
    const redis = await new OwnRedis().start();
    try {
      const t = await app({ DATABASE_URL: await ownDatabase(), REDIS_URL: redis.url(0), KNOWLEDGE_INGEST_LOCK_MS: '1000' });
      await redis.stop();
      const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(t)).attach('file', text('Lumen torch'), 'lumen.md');
      expect(res.status).toBe(202);
      const { id } = res.body.job;
      expect((await jobRow(t, id)).status).toBe('queued');
      await redis.start();
      const finished = await waitForStatus(t, id, 'completed');
      expect(finished).toMatchObject({ status: 'completed', attempts: 1, document_id: id });
      await closeApps(t);
    } finally {
      await redis.stop();
    }
  });

  describe('with an embeddings endpoint', () => {
    let embeddings: FakeEmbeddingsServer;
    let database: string;
    const embeddingEnv = () => ({
      DATABASE_URL: database,
      ...embeddings.env(),
      KNOWLEDGE_INGEST_LOCK_MS: '1000',
    });
    beforeAll(async () => {
      embeddings = await new FakeEmbeddingsServer().start();
      database = await ownDatabase();
    });
    afterAll(() => embeddings.stop());

    it('tries a job again after a passing failure', async () => {
      const t = await app(embeddingEnv());
      embeddings.failures = 1;
      const res = await request(t.app.getHttpServer()).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).attach('file', text('Vega clock'), 'vega.md');
      expect(res.status).toBe(201);
      expect(res.body.job).toMatchObject({ status: 'completed', attempts: 2, error: null });
      await closeApps(t);
    });

    it('finishes on another instance the job of an instance killed mid-ingest', async () => {
      const doomed: ServiceProcess = await startService({ ...embeddingEnv(), KNOWLEDGE_SEED_ON_START: 'false' }, { startupTimeoutMs: 90_000 });
      try {
        embeddings.held = true;
        const asked = embeddings.nextRequest();
        const token = adminAuth(apps[0]);
        const upload = await fetch(`${doomed.baseUrl}/api/knowledge/documents`, {
          method: 'POST',
          headers: token,
          body: (() => {
            const form = new FormData();
            form.append('file', new Blob([text('Nova lens')]), 'nova.md');
            return form;
          })(),
        });
        expect(upload.status).toBe(202);
        const { id } = (await upload.json()).job;
        await asked; // the doomed instance's worker is embedding it
        const survivor = await app({ ...embeddingEnv(), KNOWLEDGE_INGEST_CONCURRENCY: '0' });
        expect(await jobRow(survivor, id)).toMatchObject({ status: 'active', attempts: 1 });
        doomed.kill('SIGKILL');
        await doomed.exited;
        embeddings.release();
        // The survivor takes jobs only now, so it is the one that finds the dead worker's job.
        const taker = await app(embeddingEnv());
        const finished = await waitForStatus(taker, id, 'completed');
        expect(finished).toMatchObject({ status: 'completed', attempts: 2, document_id: id, duplicate: false });
        const [{ n }] = await taker.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents WHERE id = $1', [id]);
        expect(n).toBe(1);
      } finally {
        doomed.kill('SIGKILL');
        embeddings.release();
      }
    });
  });

  /** The job once it has `status`, read through the API as a client would (each read waits for the job to move). */
  async function waitForStatus(t: TestApp, id: string, status: string): Promise<Record<string, unknown>> {
    const base = await baseOf(t);
    const stream = await openSse(`${base}/api/knowledge/jobs/${id}/events`, { headers: adminAuth(t) });
    const event = await stream.waitFor((e) => e.event === 'job' && ['completed', 'failed'].includes(e.data.status));
    stream.close();
    expect(event.data.status).toBe(status);
    return event.data;
  }
});
