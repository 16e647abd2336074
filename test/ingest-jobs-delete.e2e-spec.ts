import type { Job, QueueEvents } from 'bullmq';
import request from 'supertest';
import { adminAuth } from './support/admin.js';
import { waitUntil } from './support/service-process.js';
import type { EntityManager } from 'typeorm';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DocumentsService, IngestOptions, IngestProgress } from '../src/knowledge/ingest/documents.service.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { FakeEmbeddingsServer } from './support/fake-embeddings-server.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { openSse } from './support/sse-client.js';

/**
 * Issue 21, item 3: a DELETE of a document while its ingest job runs wins, whatever the job's stage, on the instance
 * that runs the job and on another one: the job ends `cancelled`, and the document never comes back (no row, no
 * chunk, not searchable), not even through a retry of the job.
 */

/**
 * Where the job is held while the document is deleted: waiting for the worker; at a stage; inside the document's
 * transaction once the job has claimed the document (the delete waits for the commit); committed, before the ingest
 * returns; before the job's own completion write.
 */
type Point = 'queued' | 'parsing' | 'embedding' | 'storing' | 'committing' | 'after storing' | 'before completion';

const POINTS: Point[] = ['queued', 'parsing', 'embedding', 'storing', 'committing', 'after storing', 'before completion'];

interface Hold {
  at: Exclude<Point, 'queued'>;
  reached: () => void;
  released: Promise<void>;
}

const text = (label: string) => Buffer.from(`# ${label}\n${Array.from({ length: 60 }, (_, i) => `The ${label} manual, part ${i}: 说明书第${i}节。`).join('\n')}`, 'utf8');

describe('A document deleted while its ingest job runs', () => {
  let embeddings: FakeEmbeddingsServer;
  let database: string;
  /** The instance whose worker runs every job. */
  let worker: TestApp;
  /** An instance without a worker, sharing the database and Redis. */
  let other: TestApp;
  const holds = new Map<string, Hold>();
  /** Filenames whose ingest fails once right after its document's commit (its own read of what it stored). */
  const failAfterCommit = new Set<string>();
  let counter = 0;

  /**
   * Holds the ingest of the upload named `filename` at `at` until the returned release is called: a test seam on the
   * worker instance's DocumentsService (the job's own progress reports and the end of its ingest), taken only once.
   */
  const holdIngest = (filename: string, at: Hold['at']) => {
    let reached!: () => void;
    let release!: () => void;
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    holds.set(filename, { at, reached, released });
    return { reached: reachedPromise, release };
  };

  beforeAll(async () => {
    embeddings = await new FakeEmbeddingsServer().start();
    database = freshDatabaseUrl();
    await ensureDatabase(database);
    const env = { DATABASE_URL: database, ...embeddings.env(), KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '400,120', KNOWLEDGE_CHUNK_OVERLAP: '0' };
    worker = await createTestApp({ ...env, KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    other = await createTestApp({ ...env, KNOWLEDGE_INGEST_CONCURRENCY: '0' });

    const documents = worker.app.get(DocumentsService);
    const ingest = documents.ingest.bind(documents);
    const find = documents.find.bind(documents);
    /** Document ids whose lookup right after their commit is held (the ingest's own read of what it stored). */
    const heldLookups = new Map<string, Hold>();
    const failingLookups = new Set<string>();
    documents.find = async (id) => {
      if (failingLookups.delete(id)) throw new Error('connection terminated unexpectedly');
      const hold = heldLookups.get(id);
      if (hold) {
        heldLookups.delete(id);
        hold.reached();
        await hold.released;
      }
      return find(id);
    };
    documents.ingest = async (filename: string, data: Buffer, createdBy: string, options: IngestOptions = {}) => {
      if (failAfterCommit.delete(filename) && options.documentId) failingLookups.add(options.documentId);
      const hold = holds.get(filename);
      if (!hold) return ingest(filename, data, createdBy, options);
      holds.delete(filename);
      let paused = false;
      const pause = async () => {
        if (paused) return;
        paused = true;
        hold.reached();
        await hold.released;
      };
      if (hold.at === 'after storing' && options.documentId) heldLookups.set(options.documentId, hold);
      const onProgress: IngestProgress = async (stage, done, total) => {
        await options.onProgress?.(stage, done, total);
        // Storing: after the first batch of rows is written, inside the document's transaction.
        if (stage === hold.at && (stage !== 'storing' || done > 0)) await pause();
      };
      const beforeCommit =
        hold.at === 'committing'
          ? async (manager: EntityManager) => {
              await options.beforeCommit?.(manager);
              await pause();
            }
          : options.beforeCommit;
      const result = await ingest(filename, data, createdBy, { ...options, onProgress, beforeCommit });
      if (hold.at === 'before completion') await pause();
      return result;
    };
  });

  afterAll(async () => {
    await other?.close();
    await worker?.close();
    await embeddings?.stop();
    await dropDatabase(database);
  });

  const upload = async (filename: string, label: string) => {
    const res = await request(worker.app.getHttpServer()).post('/api/knowledge/documents').set(adminAuth(worker)).attach('file', text(label), filename);
    expect(res.status).toBe(202);
    return res.body.job.id as string;
  };

  /** The queue's job once it has finished for good (no retry left to run), as the worker's queue tells it. */
  const queueJobFinished = async (id: string) => {
    const { queue } = worker.app.get(IngestJobs) as unknown as { queue: { queue: { getJob(id: string): Promise<Job | undefined> }; events: QueueEvents } };
    const queued = await queue.queue.getJob(id);
    expect(queued).toBeDefined();
    await queued!.waitUntilFinished(queue.events).catch(() => undefined);
    return queued!.getState();
  };

  /** Backends of the test database waiting for a lock. */
  const lockWaits = async () =>
    (await worker.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0].n as number;

  const cases = POINTS.flatMap((at) => (['the same instance', 'another instance'] as const).map((where) => [at, where] as const));

  it.each(cases)('deleted at %s, on %s: the job ends cancelled and the document never comes back', async (at, where) => {
    counter += 1;
    const label = `Quokka${counter}x${at.replace(/ /g, '')} kettle`;
    const filename = `deleted-${counter}.md`;
    const releases: Array<() => void> = [];
    try {
      let id: string;
      if (at === 'queued') {
        // The worker's only slot is taken by another upload, held: this one waits in the queue.
        const blocker = holdIngest(`blocker-${counter}.md`, 'parsing');
        releases.push(blocker.release);
        await upload(`blocker-${counter}.md`, `Blocker${counter} lamp`);
        await blocker.reached;
        id = await upload(filename, label);
      } else {
        const held = holdIngest(filename, at);
        releases.push(held.release);
        id = await upload(filename, label);
        await held.reached;
      }
      const before = (await request(worker.app.getHttpServer()).get(`/api/knowledge/jobs/${id}`).set(adminAuth(worker)).expect(200)).body;
      expect(before.status).toBe(at === 'queued' ? 'queued' : 'active');

      const deleting = where === 'the same instance' ? worker : other;
      const deleteRequest = request(deleting.app.getHttpServer()).delete(`/api/knowledge/documents/${id}`).set(adminAuth(deleting));
      let deleted: request.Response;
      if (at === 'committing') {
        // The job's transaction holds its row: the delete waits for the commit, then removes what it committed.
        const answered = deleteRequest.then((res) => res);
        await waitUntil(async () => (await lockWaits()) > 0, 'the DELETE to wait for the job row lock', 60_000);
        for (const release of releases) release();
        deleted = await answered;
      } else {
        deleted = await deleteRequest;
        for (const release of releases) release();
      }
      const state = await queueJobFinished(id);

      const [job] = await worker.dataSource.query('SELECT status, document_id, content IS NULL AS dropped FROM knowledge_ingest_jobs WHERE id = $1', [id]);
      const [{ documents }] = await worker.dataSource.query('SELECT count(*)::int AS documents FROM knowledge_documents WHERE id = $1', [id]);
      const [{ chunks }] = await worker.dataSource.query('SELECT count(*)::int AS chunks FROM knowledge_chunks WHERE document_id = $1', [id]);
      const found = (
        await request(worker.app.getHttpServer())
          .post('/api/knowledge/search')
          .set(adminAuth(worker))
          .send({ query: `Quokka${counter}x${at.replace(/ /g, '')}` })
          .expect(200)
      ).body.chunks.filter((chunk: { source?: string }) => chunk.source === filename);
      const listed = (await request(other.app.getHttpServer()).get('/api/knowledge/documents').set(adminAuth(other)).expect(200)).body.documents.filter(
        (document: { id: string }) => document.id === id,
      );
      expect({ deleted: [deleted.status, deleted.body.job_cancelled], queue: state, job, documents, chunks, found: found.length, listed: listed.length }).toEqual({
        deleted: [200, true],
        queue: 'completed',
        job: { status: 'cancelled', document_id: null, dropped: true },
        documents: 0,
        chunks: 0,
        found: 0,
        listed: 0,
      });
      const seen = (await request(other.app.getHttpServer()).get(`/api/knowledge/jobs/${id}`).set(adminAuth(other)).expect(200)).body;
      expect(seen).toMatchObject({ status: 'cancelled', stage: null, document_id: null, finished_at: expect.any(String) });
    } finally {
      for (const release of releases) release();
    }
  });

  it('answers 404 for an id that is neither a document nor an unfinished job; a job that completed stays completed when its document goes', async () => {
    const server = other.app.getHttpServer();
    await request(server).delete('/api/knowledge/documents/6f1c1d8e-0000-4000-8000-000000000000').set(adminAuth(other)).expect(404);
    const stored = await request(worker.app.getHttpServer()).post('/api/knowledge/documents?wait=true').set(adminAuth(worker)).attach('file', text('Wombat lamp'), 'wombat.md');
    expect(stored.status).toBe(201);
    const id = stored.body.job.id as string;
    const deleted = await request(server).delete(`/api/knowledge/documents/${id}`).set(adminAuth(other)).expect(200);
    expect(deleted.body).toEqual({ id, message: 'Document deleted', job_cancelled: false });
    expect((await request(server).get(`/api/knowledge/jobs/${id}`).set(adminAuth(other)).expect(200)).body).toMatchObject({ status: 'completed', document_id: null });
    await request(server).delete(`/api/knowledge/documents/${id}`).set(adminAuth(other)).expect(404);
  });

  it('answers a wait=true upload whose document is deleted during its job with 409 ingest_cancelled, and ends its event stream', async () => {
    const held = holdIngest('waited.md', 'embedding');
    const waiting = request(worker.app.getHttpServer())
      .post('/api/knowledge/documents?wait=true')
      .set(adminAuth(worker))
      .attach('file', text('Numbat clock'), 'waited.md')
      .then((res) => res);
    await held.reached;
    const [{ id }] = await worker.dataSource.query(`SELECT id FROM knowledge_ingest_jobs WHERE filename = 'waited.md'`);
    const stream = await openSse(`${await other.listen()}/api/knowledge/jobs/${id}/events`, { headers: adminAuth(other) });
    await stream.waitFor((e) => e.event === 'job' && e.data.stage === 'embedding');
    await request(other.app.getHttpServer()).delete(`/api/knowledge/documents/${id}`).set(adminAuth(other)).expect(200);
    const last = await stream.waitFor((e) => e.event === 'job' && e.data.status !== 'active');
    await stream.ended;
    expect(last.data).toMatchObject({ id, status: 'cancelled', document_id: null });
    held.release();
    const res = await waiting;
    expect({ status: res.status, code: res.body.code, job_id: res.body.job_id }).toEqual({ status: 409, code: 'ingest_cancelled', job_id: id });
    // Cancelled: nothing left to delete.
    await request(other.app.getHttpServer()).delete(`/api/knowledge/documents/${id}`).set(adminAuth(other)).expect(404);
  });

  it('completes a job whose ingest failed after its document was committed, without ingesting it again', async () => {
    failAfterCommit.add('committed.md');
    const res = await request(worker.app.getHttpServer()).post('/api/knowledge/documents?wait=true').set(adminAuth(worker)).attach('file', text('Bilby lamp'), 'committed.md');
    expect(res.status).toBe(201);
    const id = res.body.job.id as string;
    const [{ chunks }] = await worker.dataSource.query('SELECT count(*)::int AS chunks FROM knowledge_chunks WHERE document_id = $1', [id]);
    expect({ job: res.body.job, chunks: chunks > 0 }).toMatchObject({ job: { status: 'completed', attempts: 1, document_id: id, error: null }, chunks: true });
  });
});
