import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { MemoryDenseIndex } from '../src/knowledge/index/dense/memory-dense-index.js';
import { PgvectorStore } from '../src/knowledge/index/dense/pgvector.repository.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { RetrievalService } from '../src/knowledge/retrieval/retrieval.service.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_PG_SERVER, testDatabaseUrl } from './support/test-env.js';
import { describeWithPgvector } from './support/pgvector.js';
import { DEFAULT_SCOPE, EVERY_COLLECTION } from './support/collections.js';

const QUERIES = [
  'How do I reset the Aurora X1 router to factory settings?',
  'What does the warranty cover?',
  '退货需要在多少天内申请？',
  '会员积分可以兑换什么？',
  'firmware update',
];

describeWithPgvector('Dense leg on pgvector (the extension is installed on this server)', () => {
  let t: TestApp;
  const search = (query: string) => request(t.app.getHttpServer()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query, top_k: 3 }).expect(200);

  beforeAll(async () => {
    // auto ranks the sparse local embeddings in memory (exactly); the pgvector leg is asked for by name.
    t = await createTestApp({ RAG_DENSE_BACKEND: 'pgvector' });
  });
  afterAll(() => t.close());

  it('installs the extension, fills the vector column for every leaf and indexes it with HNSW', async () => {
    const [extension] = await t.dataSource.query(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`);
    expect(extension?.extversion).toMatch(/^\d+\.\d+/);
    const [counts] = await t.dataSource.query(`SELECT count(*)::int AS leaves, count(embedding_vector)::int AS vectors FROM knowledge_chunks WHERE is_leaf`);
    expect(counts.leaves).toBeGreaterThan(0);
    expect(counts.vectors).toBe(counts.leaves);
    const epoch = await new PgvectorStore(t.dataSource, 256, 100).currentEpoch();
    const indexes = await t.dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'idx_knowledge_chunks_hnsw_256%'`);
    expect(indexes.map((index: { indexname: string }) => index.indexname)).toEqual([`idx_knowledge_chunks_hnsw_256_e${epoch}`]);
    expect(indexes[0].indexdef).toMatch(new RegExp(`USING hnsw .*vector_cosine_ops.*WHERE .*vector_dims\\(embedding_vector\\) = 256.*dense_epoch <= ${epoch}`));
    expect(t.app.get(DenseRecall).backend).toBe('pgvector-hnsw');
  });

  it('has the planner use the HNSW index for the dense query', async () => {
    const store = new PgvectorStore(t.dataSource, 256, 100);
    const epoch = await store.currentEpoch();
    const [vector] = await t.app.get(EmbeddingProvider).embed(['router']);
    const plan: Array<{ 'QUERY PLAN': string }> = await t.dataSource.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_seqscan = off'); // the sample corpus is small enough for a sequential scan
      await manager.query('SET LOCAL enable_sort = off'); // nor would it scan another index (the leaves' collection index) and sort
      return manager.query(
        `EXPLAIN SELECT id FROM knowledge_chunks WHERE is_leaf AND vector_dims(embedding_vector) = 256 AND dense_epoch <= ${epoch}
          ORDER BY embedding_vector::vector(256) <=> $1::vector(256) LIMIT 5`,
        [`[${vector.join(',')}]`],
      );
    });
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain(`Index Scan using ${store.indexNameFor(epoch)}`);
  });

  it('ranks as the in-memory index does, in Chinese and English', async () => {
    const embeddings = t.app.get(EmbeddingProvider);
    const store = new PgvectorStore(t.dataSource, embeddings.dimensions, 100);
    const memory = new MemoryDenseIndex(t.dataSource, embeddings.dimensions);
    // Compared by text: chunks of equal text (other tests of this worker's database store some) have equal vectors,
    // and either backend may rank such ties in any order, or keep a different one of them at the cut.
    const textsOf = async (ids: string[]) => {
      const rows: Array<{ id: string; text: string }> = await t.dataSource.query('SELECT id::text AS id, text FROM knowledge_chunks WHERE id = ANY($1::bigint[])', [ids]);
      return ids.map((id) => rows.find((row) => row.id === id)?.text);
    };
    // Nearly equal texts (other tests store chunks that differ by one number) have nearly equal vectors: their order may
    // differ between the backends' float arithmetic. So each rank must hold a chunk as similar to the query as the other
    // backend's at that rank; the texts must agree wherever the similarities at a rank are not such a near tie.
    const similarities = async (ids: string[], vector: Float32Array) => {
      const rows: Array<{ id: string; similarity: number }> = await t.dataSource.query(
        `SELECT id::text AS id, 1 - (embedding_vector::vector(${embeddings.dimensions}) <=> $2::vector(${embeddings.dimensions})) AS similarity
           FROM knowledge_chunks WHERE id = ANY($1::bigint[])`,
        [ids, `[${Array.from(vector).join(',')}]`],
      );
      return ids.map((id) => Number(rows.find((row) => row.id === id)?.similarity));
    };
    for (const query of QUERIES) {
      const vector = Float32Array.from((await embeddings.embed([query]))[0]);
      const fromPg = await store.rank(vector, 10);
      const fromMemory = await memory.rank(vector, 10);
      expect(fromPg.length).toBeGreaterThan(0);
      expect(fromPg.length).toBe(fromMemory.length);
      const [pgSimilarities, memorySimilarities] = [await similarities(fromPg, vector), await similarities(fromMemory, vector)];
      pgSimilarities.forEach((similarity, i) => expect(similarity).toBeCloseTo(memorySimilarities[i], 4));
      const [pgTexts, memoryTexts] = [await textsOf(fromPg), await textsOf(fromMemory)];
      const nearTie = (i: number) => [i - 1, i + 1].some((j) => j >= 0 && j < memorySimilarities.length && Math.abs(memorySimilarities[j] - memorySimilarities[i]) < 1e-4);
      pgTexts.forEach((text, i) => {
        if (!nearTie(i)) expect(text).toEqual(memoryTexts[i]);
      });
    }
  });

  it('names the pgvector backend in the pipeline id of a search', async () => {
    const res = await search('How do I reset the Aurora X1 router?');
    expect(res.body.rag_trace.pipeline_id).toMatch(/^hybrid-rrf-v1:local-hash:pgvector-hnsw\+merge\+/);
    expect(res.body.chunks[0].source).toBe('aurora-x1-router-manual.md');
  });

  it('writes the vector column on upload and backfills leaves stored without it', async () => {
    // Through the ingest path every way in shares (the upload route's own contract is tested with the knowledge routes).
    const { document } = await t.app
      .get(DocumentsService)
      .ingest('borealis-lamp.txt', Buffer.from('The Borealis lamp dims to five percent. 北极光台灯可以调到百分之五的亮度。'), uniqueUser('admin'));
    const documentId = document.id;
    const [written] = await t.dataSource.query(`SELECT count(*)::int AS leaves, count(embedding_vector)::int AS vectors FROM knowledge_chunks WHERE is_leaf AND document_id = $1`, [
      documentId,
    ]);
    expect(written.vectors).toBe(written.leaves);

    await t.dataSource.query(`UPDATE knowledge_chunks SET embedding_vector = NULL WHERE document_id = $1`, [documentId]);
    expect(await new PgvectorStore(t.dataSource, 256, 100).backfill()).toBe(written.leaves);
    const res = await search('Borealis lamp brightness');
    expect(res.body.chunks[0].source).toBe('borealis-lamp.txt');
  });

  it('answers from the in-memory index when the pgvector query fails, and says so', async () => {
    await t.dataSource.query(`ALTER TABLE knowledge_chunks RENAME COLUMN embedding_vector TO embedding_vector_away`);
    try {
      const res = await search('How do I reset the Aurora X1 router?');
      expect(res.body.rag_trace.pipeline_id).toMatch(/^hybrid-rrf-v1:local-hash:memory\+/);
      expect(res.body.chunks[0].source).toBe('aurora-x1-router-manual.md');
      const ranking = await t.app.get(DenseRecall).rank('router', 5, EVERY_COLLECTION);
      expect(ranking.backend).toBe('memory');
      // 42703: undefined column; the driver's own words (naming the column) stay in the log.
      expect(ranking.error).toBe('pgvector search failed (SQLSTATE 42703)');
      const steps: Array<{ stage: string; details?: Record<string, unknown> }> = [];
      await t.app.get(RetrievalService).search('router reset', 3, { scope: DEFAULT_SCOPE, onStep: (stage, _label, details) => steps.push({ stage, details }) });
      expect(steps.find((step) => step.stage === 'recall_degraded')?.details?.error).toMatch(/^pgvector search failed/);
    } finally {
      await t.dataSource.query(`ALTER TABLE knowledge_chunks RENAME COLUMN embedding_vector_away TO embedding_vector`);
    }
    const res = await search('How do I reset the Aurora X1 router?');
    expect(res.body.rag_trace.pipeline_id).toMatch(/:pgvector-hnsw\+/);
  });
});

describe('Dense leg choice', () => {
  describeWithPgvector('RAG_DENSE_BACKEND=auto where pgvector is installed', () => {
    it('ranks the sparse local embeddings with the exact in-memory scan, and model embeddings with pgvector HNSW', async () => {
      const local = await createTestApp({ RAG_DENSE_BACKEND: 'auto' });
      try {
        expect(t0(local)).toBe('memory');
      } finally {
        await local.close();
      }
      const url = `${testDatabaseUrl()}_auto_model`;
      await ensureDatabase(url);
      const model = await createTestApp({
        DATABASE_URL: url,
        RAG_DENSE_BACKEND: 'auto',
        KNOWLEDGE_SEED_ON_START: 'false',
        EMBEDDING_PROVIDER: 'openai',
        EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1',
        EMBEDDING_API_KEY: 'x',
      });
      try {
        expect(t0(model)).toBe('pgvector-hnsw');
      } finally {
        await model.close();
        const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
        await admin.end();
      }
    });
    const t0 = (app: TestApp) => app.app.get(DenseRecall).backend;
  });

  it('uses the in-memory index when RAG_DENSE_BACKEND=memory', async () => {
    const t = await createTestApp({ RAG_DENSE_BACKEND: 'memory' });
    try {
      expect(t.app.get(DenseRecall).backend).toBe('memory');
      const res = await request(t.app.getHttpServer()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: '退货需要在多少天内申请？', top_k: 3 }).expect(200);
      expect(res.body.rag_trace.pipeline_id).toMatch(/^hybrid-rrf-v1:local-hash:memory\+/);
      expect(res.body.chunks[0].source).toBe('退货与保修政策.md');
    } finally {
      await t.close();
    }
  });

  describe('on a database without the pgvector column', () => {
    const url = `${testDatabaseUrl()}_without_pgvector`;
    let admin: DataSource;

    beforeAll(async () => {
      // Migrated, then stripped of the column: the schema a server without pgvector ends up with.
      await ensureDatabase(url);
      const t = await createTestApp({ DATABASE_URL: url });
      await t.dataSource.query('ALTER TABLE knowledge_chunks DROP COLUMN IF EXISTS embedding_vector');
      await t.close();
    });
    afterAll(async () => {
      admin = new DataSource({ type: 'postgres', url: `${TEST_PG_SERVER}/postgres` });
      await admin.initialize();
      await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
      await admin.destroy();
    });

    it('falls back to the in-memory index with RAG_DENSE_BACKEND=auto, and finds Chinese and English', async () => {
      const t = await createTestApp({ DATABASE_URL: url });
      try {
        expect(t.app.get(DenseRecall).backend).toBe('memory');
        const ranking = await t.app.get(DenseRecall).rank('Aurora X1 router factory reset', 3, EVERY_COLLECTION);
        expect(ranking).toMatchObject({ backend: 'memory' });
        expect(ranking.error).toBeUndefined();
        expect(ranking.ids.length).toBeGreaterThan(0);
        const res = await request(t.app.getHttpServer()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: '会员积分可以兑换什么？', top_k: 3 }).expect(200);
        expect(res.body.chunks[0].source).toBe('会员积分规则.md');
      } finally {
        await t.close();
      }
    });

    it('refuses to start with RAG_DENSE_BACKEND=pgvector, naming the setting', async () => {
      await expect(createTestApp({ DATABASE_URL: url, RAG_DENSE_BACKEND: 'pgvector' })).rejects.toThrow(/RAG_DENSE_BACKEND=pgvector, but this database has no pgvector column/);
    });
  });
});
