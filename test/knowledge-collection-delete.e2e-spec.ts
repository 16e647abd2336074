import type { Job } from 'bullmq';
import request from 'supertest';
import type { EntityManager } from 'typeorm';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { DocumentsService, IngestOptions, IngestProgress } from '../src/knowledge/ingest/documents.service.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { adminAuth } from './support/admin.js';
import { createCollection, EVERY_COLLECTION, uploadTo } from './support/collections.js';
import { describeWithPgvector } from './support/pgvector.js';
import { openSse } from './support/sse-client.js';
import { waitUntil } from './support/service-process.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

type HoldPoint = 'storing' | 'committing';

/**
 * Issue 23, item 1: deleting a collection deletes its documents, chunks,
 * vectors (pgvector's column, every instance's in-memory index) and ingest
 * jobs; a job queued or under way stores nothing afterwards. The tables are
 * read back: no row is left.
 */
function deletionSuite(backend: 'memory' | 'pgvector') {
  let database: string;
  /** Runs every ingest job. */
  let worker: TestApp;
  /** Takes none; deletes, and ranks with its own dense index. */
  let front: TestApp;
  let frontBase: string;
  const holds = new Map<string, { at: HoldPoint; reached: () => void; released: Promise<void> }>();
  const text = (word: string) => `# ${word}\n${Array.from({ length: 30 }, (_, i) => `The ${word} gauge, part ${i}: ${word}量规第${i}节。`).join('\n')}`;

  const holdIngest = (filename: string, at: HoldPoint) => {
    let reached!: () => void;
    let release!: () => void;
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    holds.set(filename, { at, reached, released: new Promise<void>((resolve) => (release = resolve)) });
    return { reached: reachedPromise, release };
  };

  beforeAll(async () => {
    database = freshDatabaseUrl();
    await ensureDatabase(database);
    const env = { DATABASE_URL: database, RAG_DENSE_BACKEND: backend, KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '400,120', KNOWLEDGE_CHUNK_OVERLAP: '0' };
    worker = await createTestApp({ ...env, KNOWLEDGE_INGEST_CONCURRENCY: '1' });
    front = await createTestApp({ ...env, KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    frontBase = await front.listen();
    // A seam on the worker's ingest: held at a point, once, for the upload of that name.
    const documents = worker.app.get(DocumentsService);
    const ingest = documents.ingest.bind(documents);
    documents.ingest = async (filename: string, data: Buffer, createdBy: string, options: IngestOptions = {}) => {
      const hold = holds.get(filename);
      if (!hold) return ingest(filename, data, createdBy, options);
      holds.delete(filename);
      const pause = async () => {
        hold.reached();
        await hold.released;
      };
      const onProgress: IngestProgress = async (stage, done, total) => {
        await options.onProgress?.(stage, done, total);
        if (hold.at === 'storing' && stage === 'storing' && done > 0) await pause();
      };
      const beforeCommit = async (manager: EntityManager) => {
        await options.beforeCommit?.(manager);
        if (hold.at === 'committing') await pause();
      };
      return ingest(filename, data, createdBy, { ...options, onProgress, beforeCommit });
    };
  });

  afterAll(async () => {
    await front?.close();
    await worker?.close();
    await dropDatabase(database);
  });

  const rowsOf = async (collectionId: string) =>
    (
      await worker.dataSource.query(
        `SELECT (SELECT count(*)::int FROM knowledge_collections WHERE id = $1) AS collections,
                (SELECT count(*)::int FROM knowledge_collection_access WHERE collection_id = $1) AS access,
                (SELECT count(*)::int FROM knowledge_documents WHERE collection_id = $1) AS documents,
                (SELECT count(*)::int FROM knowledge_chunks WHERE collection_id = $1) AS chunks,
                (SELECT count(*)::int FROM knowledge_ingest_jobs WHERE collection_id = $1) AS jobs`,
        [collectionId],
      )
    )[0];
  const upload = async (app: TestApp, as: { Authorization: string }, collectionId: string, filename: string, word: string) => {
    const res = await request(app.app.getHttpServer())
      .post(`/api/knowledge/collections/${collectionId}/documents`)
      .set(as)
      .attach('file', Buffer.from(text(word)), filename);
    expect(res.status).toBe(202);
    return res.body.job.id as string;
  };
  /** The dense ranking of `word` on both instances (each its own in-memory index, or pgvector). */
  const denseIds = async (word: string) => [
    ...(await worker.app.get(DenseRecall).rank(word, 50, EVERY_COLLECTION)).ids,
    ...(await front.app.get(DenseRecall).rank(word, 50, EVERY_COLLECTION)).ids,
  ];
  /** The sources a search by `userId` finds (every collection that user can read: the owner's before the delete). */
  const searched = async (word: string, userId: string) =>
    (await request(front.app.getHttpServer()).post('/api/knowledge/search').set(front.auth(userId)).send({ query: word }).expect(200)).body.chunks.map(
      (chunk: { source: string }) => chunk.source,
    );
  /** The job in the worker instance's BullMQ queue. */
  const queueJob = (id: string) => (worker.app.get(IngestJobs) as unknown as { queue: { queue: { getJob(id: string): Promise<Job | undefined> } } }).queue.queue.getJob(id);

  it('leaves no row of its documents, chunks, vectors, jobs and access list, and no job under way or queued stores anything', async () => {
    const aliceId = uniqueUser('alice');
    const alice = worker.auth(aliceId);
    const admin = adminAuth(worker);
    const { id } = await createCollection(worker, alice, 'Doomed');
    await uploadTo(worker, alice, id, 'xylocarp.md', text('Xylocarp'));
    await uploadTo(worker, alice, id, 'quillwort.md', text('Quillwort'));
    await uploadTo(worker, admin, 'default', 'keeper.md', text('Keeperlamp'));
    const doomedChunks: string[] = (await worker.dataSource.query('SELECT id::text FROM knowledge_chunks WHERE collection_id = $1', [id])).map((row: { id: string }) => row.id);
    expect(doomedChunks.length).toBeGreaterThan(0);
    if (backend === 'pgvector') {
      const [{ vectors }] = await worker.dataSource.query('SELECT count(embedding_vector)::int AS vectors FROM knowledge_chunks WHERE collection_id = $1 AND is_leaf', [id]);
      expect(vectors).toBeGreaterThan(0);
    }
    // Both instances rank them before (each loads its in-memory index now).
    expect((await denseIds('Xylocarp')).filter((chunk) => doomedChunks.includes(chunk)).length).toBeGreaterThan(0);
    expect(await searched('Xylocarp', aliceId)).toContain('xylocarp.md');

    // One job held inside its document's transaction, one queued behind it.
    const held = holdIngest('held.md', 'storing');
    const active = await upload(worker, alice, id, 'held.md', 'Heldgauge');
    await held.reached;
    const queued = await upload(front, alice, id, 'queued.md', 'Queuedgauge');

    const deleted = await request(front.app.getHttpServer()).delete(`/api/knowledge/collections/${id}`).set(alice).expect(200);
    expect(deleted.body).toEqual({ id, documents_deleted: 2, jobs_cancelled: 2 });
    // At once, before anything else is stored: the index version moved, and every instance drops the vectors.
    expect((await denseIds('Xylocarp')).filter((chunk) => doomedChunks.includes(chunk))).toEqual([]);
    held.release();
    // The worker takes jobs in order: once an upload after them is stored, the earlier ones have ended.
    await uploadTo(worker, admin, 'default', 'sentinel.md', text('Sentinelgauge'));

    expect(await rowsOf(id)).toEqual({ collections: 0, access: 0, documents: 0, chunks: 0, jobs: 0 });
    const [{ left }] = await worker.dataSource.query('SELECT count(*)::int AS left FROM knowledge_chunks WHERE id = ANY($1::bigint[])', [doomedChunks]);
    expect(left).toBe(0);
    const [{ stray }] = await worker.dataSource.query(`SELECT count(*)::int AS stray FROM knowledge_documents WHERE filename IN ('held.md', 'queued.md')`);
    expect(stray).toBe(0);
    expect(await queueJob(queued)).toBeUndefined();
    const activeState = await (await queueJob(active))?.getState();
    expect(activeState === undefined || activeState === 'completed').toBe(true);
    // Neither instance's dense leg nor the search finds them; the default collection's documents stay.
    for (const word of ['Xylocarp', 'Quillwort', 'Heldgauge', 'Queuedgauge']) {
      expect((await denseIds(word)).filter((chunk) => doomedChunks.includes(chunk))).toEqual([]);
      expect(await searched(word, aliceId)).toEqual(expect.not.arrayContaining(['xylocarp.md', 'quillwort.md', 'held.md', 'queued.md']));
    }
    expect(await searched('Keeperlamp', aliceId)).toContain('keeper.md');
  });

  it('waits for a job committing its document, then deletes what it committed', async () => {
    const aliceId = uniqueUser('alice');
    const alice = worker.auth(aliceId);
    const { id } = await createCollection(worker, alice, 'Committing');
    const held = holdIngest('committing.md', 'committing');
    const job = await upload(worker, alice, id, 'committing.md', 'Commitgauge');
    await held.reached;
    const deleting = request(front.app.getHttpServer())
      .delete(`/api/knowledge/collections/${id}`)
      .set(alice)
      .then((res) => res);
    // The job's claim holds its row: the delete waits for the commit.
    await waitUntil(
      async () => (await worker.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0].n > 0,
      'the DELETE to wait for the job row lock',
      60_000,
    );
    held.release();
    const deleted = await deleting;
    expect([deleted.status, deleted.body.documents_deleted]).toEqual([200, 1]);
    await uploadTo(worker, adminAuth(worker), 'default', 'after-commit.md', text('Aftercommit'));
    expect(await rowsOf(id)).toEqual({ collections: 0, access: 0, documents: 0, chunks: 0, jobs: 0 });
    expect(await queueJob(job).then((queuedJob) => queuedJob?.getState())).not.toBe('failed');
    expect(await searched('Commitgauge', aliceId)).not.toContain('committing.md');
  });

  it("ends a wait=true upload and the job's event stream when the collection is deleted under the job, as cancelled", async () => {
    const aliceId = uniqueUser('alice');
    const alice = worker.auth(aliceId);
    const { id } = await createCollection(worker, alice, 'Deleted under a waiting upload');
    const held = holdIngest('waited.md', 'storing');
    const waiting = request(front.app.getHttpServer())
      .post(`/api/knowledge/collections/${id}/documents?wait=true`)
      .set(alice)
      .attach('file', Buffer.from(text('Waitgauge')), 'waited.md')
      .then((res) => res);
    await held.reached;
    const [{ id: job }] = await worker.dataSource.query(`SELECT id FROM knowledge_ingest_jobs WHERE collection_id = $1`, [id]);
    const events = await openSse(`${frontBase}/api/knowledge/jobs/${job}/events`, { headers: alice });
    await events.waitFor((event) => event.event === 'job' && event.data.status === 'active');

    await request(front.app.getHttpServer()).delete(`/api/knowledge/collections/${id}`).set(alice).expect(200);
    held.release();
    const answered = await waiting;
    expect([answered.status, answered.body.code]).toEqual([409, 'ingest_cancelled']);
    await events.ended;
    expect(events.events.at(-1)?.data).toMatchObject({ id: job, status: 'cancelled', document_id: null });
    expect(await rowsOf(id)).toEqual({ collections: 0, access: 0, documents: 0, chunks: 0, jobs: 0 });
  });
}

describe('Deleting a collection, in-memory dense index', () => deletionSuite('memory'));
describeWithPgvector('Deleting a collection, pgvector', () => deletionSuite('pgvector'));
