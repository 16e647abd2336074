import { jest } from '@jest/globals';
import pg from 'pg';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { MemoryDenseIndex } from '../src/knowledge/index/dense/memory-dense-index.js';
import { PgvectorStore, vectorLiteral } from '../src/knowledge/index/dense/pgvector.repository.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { HybridRecall } from '../src/knowledge/retrieval/hybrid-recall.service.js';
import { IndexIdentity } from '../src/knowledge/index/index-identity.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { describeWithPgvector } from './support/pgvector.js';
import { EVERY_COLLECTION } from './support/collections.js';

const DIMENSIONS = 256;
// One level of 220-character chunks: every generated line is one leaf.
const SETTINGS = { RAG_DENSE_BACKEND: 'pgvector', KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '220', KNOWLEDGE_CHUNK_OVERLAP: '0' };

/** `count` distinct lines that all name `word` (about two to a leaf). */
function document(word: string, count: number): Buffer {
  const lines = Array.from({ length: count }, (_, i) => `Note ${i} on the ${word} lantern: the ${word} glows in shade ${i * 7919} of router blue.`);
  return Buffer.from(lines.join('\n'), 'utf8');
}

/**
 * Resolves when `probe` answers something other than undefined; the database events here have no notification to
 * wait on. One that never comes is caught by Jest's test timeout.
 */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describeWithPgvector('pgvector bulk load: the HNSW index is built after the load and swapped in', () => {
  const url = freshDatabaseUrl();
  let t: TestApp;
  let sql: pg.Client;
  const store = new PgvectorStore(null as never, DIMENSIONS, 100);

  const rows = async <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> => (await sql.query(text, params)).rows as T[];
  const epoch = async () => Number((await rows<{ e: number }>('SELECT dense_epoch AS e FROM knowledge_index_state WHERE id = 1'))[0].e);
  const indexes = () =>
    rows<{ name: string; valid: boolean }>(
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'knowledge_chunks'::regclass AND c.relname LIKE 'idx_knowledge_chunks_hnsw_%' ORDER BY c.relname`,
    );
  /** What the planner knows of the table and its HNSW indexes (row and page counts). */
  const plannerCounts = () =>
    rows<{ name: string; reltuples: number; relpages: number }>(
      `SELECT c.relname AS name, c.reltuples, c.relpages FROM pg_class c
        WHERE c.relname = 'knowledge_chunks' OR c.relname LIKE 'idx_knowledge_chunks_hnsw_%' ORDER BY c.relname`,
    );
  const leavesOf = async (filename: string) =>
    rows<{ id: string; dense_epoch: number }>(
      `SELECT c.id::text AS id, c.dense_epoch FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE d.filename = $1 AND c.is_leaf ORDER BY c.id`,
      [filename],
    );
  /** The backend PID of a CREATE INDEX CONCURRENTLY of this database that is waiting for a lock. */
  const waitingBuild = async () => {
    const [row] = await rows<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'CREATE INDEX CONCURRENTLY%' AND wait_event_type = 'Lock'`,
    );
    return row?.pid;
  };
  /** A transaction holding a write lock on knowledge_chunks: CREATE INDEX CONCURRENTLY waits for it to end. */
  const holdBuild = async () => {
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE knowledge_chunks IN ROW EXCLUSIVE MODE');
    return {
      release: async () => {
        await blocker.query('COMMIT');
        await blocker.end();
      },
    };
  };
  /** What the plan of a dense query for `text` needs from the running instance (asked before it is closed). */
  const planInputs = async (text: string) => ({ vector: (await t.app.get(EmbeddingProvider).embed([text]))[0], spaceId: t.app.get(IndexIdentity).spaceId });
  const plan = async (text: string, inputs?: { vector: number[]; spaceId: number | undefined }) => {
    const { vector, spaceId } = inputs ?? (await planInputs(text));
    const e = await epoch();
    await sql.query('BEGIN');
    try {
      await sql.query('SET LOCAL enable_seqscan = off'); // a few hundred rows: the planner would rather scan
      // Nor sort the rows of another index (the leaves' collection index) when an index gives the order: what is asked is whether the HNSW index is usable.
      await sql.query('SET LOCAL enable_sort = off');
      const lines = await rows<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM knowledge_chunks
          WHERE is_leaf AND vector_dims(embedding_vector) = ${DIMENSIONS} AND dense_epoch <= ${e} AND space_id = $2
          ORDER BY embedding_vector::vector(${DIMENSIONS}) <=> $1::vector(${DIMENSIONS}) LIMIT 10`,
        [vectorLiteral(vector), spaceId],
      );
      return lines.map((line) => line['QUERY PLAN']).join('\n');
    } finally {
      await sql.query('COMMIT');
    }
  };
  const dense = () => t.app.get(DenseRecall);
  const documents = () => t.app.get(DocumentsService);
  /** A bulk load whose instance "dies" between its commit and its index build: finishBulkLoad never runs. */
  const bulkLoadWithoutFinish = async (filename: string, word: string) => {
    const skipped = jest.spyOn(dense(), 'finishBulkLoad').mockResolvedValue(undefined);
    try {
      await documents().ingest(filename, document(word, 60), 'test', { bulk: true });
    } finally {
      skipped.mockRestore();
    }
  };

  beforeAll(async () => {
    await ensureDatabase(url);
    t = await createTestApp({ DATABASE_URL: url, ...SETTINGS });
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await documents().ingest('baseline.txt', document('borealis', 40), 'test');
  });
  afterAll(async () => {
    await sql?.end();
    await t?.close();
    await dropDatabase(url);
  });

  it('loads in bulk outside the current index, answers searches during the build, then swaps the new index in', async () => {
    const before = await epoch();
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before), valid: true }]);
    const [{ size: oldSize }] = await rows<{ size: string }>('SELECT pg_relation_size($1)::text AS size', [store.indexNameFor(before)]);
    const [{ version: oldVersion }] = await rows<{ version: string }>('SELECT version::text FROM knowledge_index_state WHERE id = 1');

    const build = await holdBuild();
    const ingesting = documents().ingest('bulk.txt', document('zephyrquartz', 300), 'test', { bulk: true });
    let released = false;
    try {
      await until(waitingBuild);
      // Committed, in the next epoch, and not in the old index's graph.
      const bulk = await leavesOf('bulk.txt');
      expect(bulk.length).toBeGreaterThanOrEqual(100);
      expect(new Set(bulk.map((leaf) => leaf.dense_epoch))).toEqual(new Set([before + 1]));
      expect((await rows<{ size: string }>('SELECT pg_relation_size($1)::text AS size', [store.indexNameFor(before)]))[0].size).toBe(oldSize);
      expect(await indexes()).toEqual([
        { name: store.indexNameFor(before), valid: true },
        { name: store.indexNameFor(before + 1), valid: false },
      ]);

      // Searches answer meanwhile, from the old index: the full-text leg finds the new leaves, the dense leg not yet.
      const bulkIds = new Set(bulk.map((leaf) => leaf.id));
      const ranking = await dense().rank('zephyrquartz lantern router', 10, EVERY_COLLECTION);
      expect(ranking).toMatchObject({ backend: 'pgvector-hnsw' });
      expect(ranking.error).toBeUndefined();
      expect(ranking.ids.length).toBeGreaterThan(0);
      expect(ranking.ids.filter((id) => bulkIds.has(id))).toEqual([]);
      const fullText = await t.app.get(HybridRecall).fullTextRanking('zephyrquartz', 10, EVERY_COLLECTION);
      expect(fullText.length).toBeGreaterThan(0);
      expect(fullText.every((id) => bulkIds.has(id))).toBe(true);
      expect(await plan('zephyrquartz')).toContain(`Index Scan using ${store.indexNameFor(before)}`);
      expect(await epoch()).toBe(before);

      await build.release();
      released = true;
      await ingesting;
    } finally {
      if (!released) await build.release();
      await ingesting.catch(() => undefined);
    }

    expect(await epoch()).toBe(before + 1);
    const [{ version }] = await rows<{ version: string }>('SELECT version::text FROM knowledge_index_state WHERE id = 1');
    expect(BigInt(version)).toBeGreaterThan(BigInt(oldVersion));
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before + 1), valid: true }]);
    expect(await plan('zephyrquartz')).toContain(`Index Scan using ${store.indexNameFor(before + 1)}`);
    const bulkIds = new Set((await leavesOf('bulk.txt')).map((leaf) => leaf.id));
    const after = await dense().rank('zephyrquartz lantern', 10, EVERY_COLLECTION);
    expect(after.ids).toHaveLength(10);
    expect(after.ids.every((id) => bulkIds.has(id))).toBe(true);
    // An ordinary ingest now writes the new epoch, inside the index.
    await documents().ingest('after.txt', document('quillmoss', 5), 'test');
    expect(new Set((await leavesOf('after.txt')).map((leaf) => leaf.dense_epoch))).toEqual(new Set([before + 1]));
    const quillmoss = new Set((await leavesOf('after.txt')).map((leaf) => leaf.id));
    expect((await dense().rank('quillmoss lantern', 3, EVERY_COLLECTION)).ids.every((id) => quillmoss.has(id))).toBe(true);
  });

  it('repairs at start the invalid index an interrupted build left, and finishes the bulk load', async () => {
    const before = await epoch();
    const build = await holdBuild();
    const ingesting = documents().ingest('interrupted.txt', document('glimmerfen', 80), 'test', { bulk: true });
    let stored: Awaited<typeof ingesting>;
    try {
      const pid = await until(waitingBuild);
      await sql.query('SELECT pg_cancel_backend($1)', [pid]);
      // The document is stored (its transaction committed before the build): a failed build is logged, not the ingest's failure.
      stored = await ingesting;
    } finally {
      await build.release();
    }
    expect(stored).toMatchObject({ duplicate: false, document: { filename: 'interrupted.txt' } });
    // What an instance killed mid-build leaves: the rows committed in the next epoch, the new index INVALID.
    expect(await epoch()).toBe(before);
    expect(await indexes()).toEqual([
      { name: store.indexNameFor(before), valid: true },
      { name: store.indexNameFor(before + 1), valid: false },
    ]);
    const interrupted = new Set((await leavesOf('interrupted.txt')).map((leaf) => leaf.id));
    expect((await dense().rank('glimmerfen lantern', 10, EVERY_COLLECTION)).ids.filter((id) => interrupted.has(id))).toEqual([]);

    await t.close();
    t = await createTestApp({ DATABASE_URL: url, ...SETTINGS });
    expect(await epoch()).toBe(before + 1);
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before + 1), valid: true }]);
    const ranking = await dense().rank('glimmerfen lantern', 10, EVERY_COLLECTION);
    expect(ranking.ids).toHaveLength(10);
    expect(ranking.ids.every((id) => interrupted.has(id))).toBe(true);
  });

  it('finishes at start the bulk load of an instance that died after its commit, with instances starting together', async () => {
    const before = await epoch();
    await bulkLoadWithoutFinish('orphaned.txt', 'tarnwhistle');
    expect(await epoch()).toBe(before);
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before), valid: true }]);
    const orphaned = new Set((await leavesOf('orphaned.txt')).map((leaf) => leaf.id));
    expect(orphaned.size).toBeGreaterThan(5);

    await t.close();
    const [first, second] = await Promise.all([createTestApp({ DATABASE_URL: url, ...SETTINGS }), createTestApp({ DATABASE_URL: url, ...SETTINGS })]);
    t = first;
    await second.close();
    expect(await epoch()).toBe(before + 1);
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before + 1), valid: true }]);
    expect((await dense().rank('tarnwhistle lantern', 5, EVERY_COLLECTION)).ids.every((id) => orphaned.has(id))).toBe(true);
  });

  it('ends two bulk-load finishes at once (two instances) with exactly one valid index', async () => {
    const other = await createTestApp({ DATABASE_URL: url, ...SETTINGS });
    try {
      const before = await epoch();
      await bulkLoadWithoutFinish('twice.txt', 'saltmarrow');
      await Promise.all([dense().finishBulkLoad(before + 1), other.app.get(DenseRecall).finishBulkLoad(before + 1)]);
      expect(await epoch()).toBe(before + 1);
      expect(await indexes()).toEqual([{ name: store.indexNameFor(before + 1), valid: true }]);
      const loaded = new Set((await leavesOf('twice.txt')).map((leaf) => leaf.id));
      for (const app of [t, other]) {
        const ranking = await app.app.get(DenseRecall).rank('saltmarrow lantern', 5, EVERY_COLLECTION);
        expect(ranking.ids).toHaveLength(5);
        expect(ranking.ids.every((id) => loaded.has(id))).toBe(true);
      }
    } finally {
      await other.close();
    }
  });

  it('stops at shutdown the index build its reconciler started: nothing of it runs on behind the closed instance', async () => {
    const before = await epoch();
    // An instance whose reconciler looks every second (its lock period): once a load has been over for a second, it builds its index.
    await t.close();
    t = await createTestApp({ DATABASE_URL: url, ...SETTINGS, KNOWLEDGE_INGEST_LOCK_MS: '1000' });
    const build = await holdBuild();
    try {
      await bulkLoadWithoutFinish('left-behind.txt', 'brindlecove');
      // The reconciler's build, waiting on the held table.
      await until(waitingBuild);
      await t.close();
      // The instance is closed: its build was cancelled, not left waiting to go on later.
      expect(await waitingBuild()).toBeUndefined();
      expect(await rows(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'CREATE INDEX CONCURRENTLY%' AND state = 'active'`)).toEqual([]);
    } finally {
      await build.release();
    }
    // The next instance finishes the load: the cancelled build's INVALID index replaced, the epoch moved.
    t = await createTestApp({ DATABASE_URL: url, ...SETTINGS });
    expect(await epoch()).toBe(before + 1);
    expect(await indexes()).toEqual([{ name: store.indexNameFor(before + 1), valid: true }]);
  });

  it('never ranks leaves of another embedding space', async () => {
    const spaceId = t.app.get(IndexIdentity).spaceId;
    const [{ id: otherSpace }] = await rows<{ id: number }>(
      `INSERT INTO knowledge_embedding_spaces (provider, model, dimensions, tokenizer_version)
       VALUES ('other', 'another-model', ${DIMENSIONS}, 'other-tokenizer') RETURNING id`,
    );
    const query = 'copperwick lantern';
    const [vector] = await t.app.get(EmbeddingProvider).embed([query]);
    const floats = Float32Array.from(vector);
    const [{ id: documentId }] = await rows<{ id: string }>(
      `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, created_by)
       VALUES (gen_random_uuid(), 'other-space.txt', 'text/plain', 1, repeat('a', 64), NULL, 3, 'test') RETURNING id`,
    );
    // Leaves whose vectors are the query's own: the best match there is, were they ranked.
    const foreign = await rows<{ id: string }>(
      `INSERT INTO knowledge_chunks (document_id, level, is_leaf, ordinal, text, search_vector, embedding, embedding_vector, space_id, dense_epoch)
       SELECT $1, 1, true, n, 'copperwick lantern ' || n, to_tsvector('simple', 'copperwick lantern'), $2, $3::vector, $4,
              (SELECT dense_epoch FROM knowledge_index_state WHERE id = 1)
         FROM generate_series(0, 2) AS n RETURNING id::text AS id`,
      [documentId, Buffer.from(floats.buffer), vectorLiteral(floats), otherSpace],
    );
    await sql.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
    const foreignIds = new Set(foreign.map((row) => row.id));

    const ranking = await dense().rank(query, 20, EVERY_COLLECTION);
    expect(ranking.ids.length).toBe(20);
    expect(ranking.ids.filter((id) => foreignIds.has(id))).toEqual([]);
    const memory = new MemoryDenseIndex(t.dataSource, DIMENSIONS, () => spaceId);
    expect((await memory.rank(floats, 20)).filter((id) => foreignIds.has(id))).toEqual([]);

    // The same rows in this instance's space come first: only the space kept them out.
    await sql.query('UPDATE knowledge_chunks SET space_id = $1 WHERE document_id = $2', [spaceId, documentId]);
    await sql.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
    expect(new Set((await dense().rank(query, 3, EVERY_COLLECTION)).ids)).toEqual(foreignIds);
    expect(new Set(await memory.rank(floats, 3))).toEqual(foreignIds);
    await sql.query('DELETE FROM knowledge_documents WHERE id = $1', [documentId]);
  });

  it('replaces the index of the name before dense epochs at start', async () => {
    const current = await epoch();
    // The instance is stopped first: its index upkeep must not touch the indexes while they are swapped under it.
    const probe = await planInputs('zephyrquartz');
    await t.close();
    await sql.query(`DROP INDEX "${store.indexNameFor(current)}"`);
    await sql.query(
      `CREATE INDEX "${store.legacyIndexName}" ON knowledge_chunks
         USING hnsw ((embedding_vector::vector(${DIMENSIONS})) vector_cosine_ops)
         WHERE is_leaf AND vector_dims(embedding_vector) = ${DIMENSIONS}`,
    );
    // The old index still serves the query of the current epoch: its predicate is implied by the query's. (A failure
    // shows the indexes there are, and logs the plan with the planner's counts.)
    const legacy = await plan('zephyrquartz', probe);
    if (!legacy.includes(`Index Scan using ${store.legacyIndexName}`)) console.log(legacy, await plannerCounts());
    expect({ servedByTheOldIndex: legacy.includes(`Index Scan using ${store.legacyIndexName}`), indexes: await indexes() }).toEqual({
      servedByTheOldIndex: true,
      indexes: [{ name: store.legacyIndexName, valid: true }],
    });
    t = await createTestApp({ DATABASE_URL: url, ...SETTINGS });
    expect(await indexes()).toEqual([{ name: store.indexNameFor(current), valid: true }]);
    expect(await plan('zephyrquartz')).toContain(`Index Scan using ${store.indexNameFor(current)}`);
  });
});

describeWithPgvector('pgvector bulk load of many documents as ingest jobs: one index build', () => {
  const databases: string[] = [];
  const apps: TestApp[] = [];
  const broken = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from('not really a pdf '.repeat(20))]);

  /** An instance on `url`; `onLine` hears its log (JSON lines). */
  const instance = async (url: string, env: Record<string, string>, onLine?: (line: string) => void) => {
    const destination = onLine && { write: onLine };
    const logging: Record<string, string> = onLine ? { LOG_LEVEL: 'info' } : {};
    const created = await createTestApp({ DATABASE_URL: url, ...SETTINGS, KNOWLEDGE_BULK_LEAVES: '1', ...logging, ...env }, destination as never);
    apps.push(created);
    return created;
  };
  const state = async (t: TestApp) => {
    const [row] = await t.dataSource.query(
      `SELECT s.dense_epoch AS epoch,
              (SELECT count(*)::int FROM knowledge_chunks WHERE is_leaf AND dense_epoch > s.dense_epoch) AS uncovered
         FROM knowledge_index_state s WHERE s.id = 1`,
    );
    return { epoch: Number(row.epoch), uncovered: Number(row.uncovered) };
  };
  /** Leaf ids of `filename` among the dense leg's top `limit` for `query`. */
  const denseHitsOf = async (t: TestApp, filename: string, query: string, limit = 10) => {
    const ids = new Set((await t.app.get(DenseRecall).rank(query, limit, EVERY_COLLECTION)).ids);
    const leaves: Array<{ id: string }> = await t.dataSource.query(
      `SELECT c.id::text AS id FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = $1 AND c.is_leaf`,
      [filename],
    );
    return leaves.filter((leaf) => ids.has(leaf.id)).length;
  };

  afterAll(async () => {
    for (const created of apps.reverse()) await created.close().catch(() => undefined);
    for (const url of databases) await dropDatabase(url);
  });

  it('leaves the build to the last queued job, which builds one index over every document of the load', async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    databases.push(url);
    // No reconciler round during the test: only the jobs build.
    const quiet = { KNOWLEDGE_INGEST_LOCK_MS: '600000' };
    const front = await instance(url, { ...quiet, KNOWLEDGE_INGEST_CONCURRENCY: '0' });
    const before = await state(front);
    const jobs = front.app.get(IngestJobs);
    const words = ['aurora', 'basalt', 'cobalt'];
    const submitted = [];
    for (const word of words) submitted.push((await jobs.submit(`${word}.txt`, document(word, 60), 'test')).job!.id);
    const lines: string[] = [];
    await instance(url, { ...quiet, KNOWLEDGE_INGEST_CONCURRENCY: '1' }, (line) => lines.push(line));
    for (const id of submitted) expect(await jobs.waitUntilFinished(id)).toMatchObject({ status: 'completed' });

    const stored = lines.map((line) => JSON.parse(line).msg as string).filter((msg) => msg?.startsWith('stored '));
    process.stdout.write(`one load as jobs:\n${stored.join('\n')}\n`);
    expect(stored.map((msg) => msg.includes('index build left to a later bulk load'))).toEqual([true, true, false]);
    expect(await state(front)).toEqual({ epoch: before.epoch + 1, uncovered: 0 });
    // The first document of the load is found by the dense leg through the one index built after the last.
    expect(await denseHitsOf(front, 'aurora.txt', 'the aurora lantern glows')).toBeGreaterThan(0);
  });

  it('builds the index of a load whose later job failed, once no job is under way', async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    databases.push(url);
    // Only the worker's reconciler runs during the test (every second), so that its log tells of the build.
    const front = await instance(url, { KNOWLEDGE_INGEST_CONCURRENCY: '0', KNOWLEDGE_INGEST_LOCK_MS: '600000' });
    const before = await state(front);
    const jobs = front.app.get(IngestJobs);
    const loaded = (await jobs.submit('dolomite.txt', document('dolomite', 60), 'test')).job!.id;
    const failing = (await jobs.submit('broken.pdf', broken, 'test')).job!.id;
    const lines: string[] = [];
    let heardBuild!: () => void;
    const built = new Promise<void>((resolve) => (heardBuild = resolve));
    await instance(url, { KNOWLEDGE_INGEST_CONCURRENCY: '1', KNOWLEDGE_INGEST_LOCK_MS: '1000' }, (line) => {
      lines.push(line);
      if (line.includes('bulk-loaded leaves without an index')) heardBuild();
    });
    expect(await jobs.waitUntilFinished(loaded)).toMatchObject({ status: 'completed' });
    expect(await jobs.waitUntilFinished(failing)).toMatchObject({ status: 'failed' });
    await built;
    expect(lines.some((line) => line.includes('index build left to a later bulk load'))).toBe(true);
    expect(await state(front)).toEqual({ epoch: before.epoch + 1, uncovered: 0 });
    expect(await denseHitsOf(front, 'dolomite.txt', 'the dolomite lantern glows')).toBeGreaterThan(0);
  });
});
