import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { makePdf } from './support/make-pdf.js';

describe('Knowledge base: documents, chunk hierarchy, hybrid retrieval', () => {
  let t: TestApp;
  const admin = () => t.auth(uniqueUser('admin'), { role: 'admin' });
  const server = () => t.app.getHttpServer();
  const upload = (auth: Record<string, string>, name: string, data: Buffer) =>
    request(server()).post('/api/knowledge/documents').set(auth).attach('file', data, name);

  beforeAll(async () => {
    t = await createTestApp({ KNOWLEDGE_CHUNK_SIZES: '600,200', KNOWLEDGE_CHUNK_OVERLAP: '30' });
  });
  afterAll(() => t.close());

  it('loaded the sample corpus into the empty knowledge base at start-up', async () => {
    const res = await request(server()).get('/api/knowledge/documents').set(t.auth(uniqueUser())).expect(200);
    const names = res.body.documents.map((d: { filename: string }) => d.filename);
    expect(names).toEqual(expect.arrayContaining(['aurora-x1-router-manual.md', '退货与保修政策.md', '会员积分规则.md']));
    for (const doc of res.body.documents) expect(doc.leaf_count).toBeGreaterThan(0);
  });

  it('stores a PDF page by page in a two-level hierarchy, and finds it with its page number', async () => {
    const pdf = makePdf([
      'The Zephyr kettle boils one litre of water in four minutes.',
      'Descale the Zephyr kettle every month with white vinegar.',
    ]);
    const res = await upload(admin(), 'zephyr-kettle.pdf', pdf).expect(201);
    expect(res.body.duplicate).toBe(false);
    expect(res.body.document).toMatchObject({ filename: 'zephyr-kettle.pdf', content_type: 'application/pdf', page_count: 2, leaf_count: 2 });
    const levels = await t.dataSource.query(
      `SELECT level, is_leaf, page, parent_id IS NULL AS root FROM knowledge_chunks WHERE document_id = $1 ORDER BY level, ordinal`,
      [res.body.document.id],
    );
    expect(levels).toEqual([
      { level: 1, is_leaf: false, page: 1, root: true },
      { level: 1, is_leaf: false, page: 2, root: true },
      { level: 2, is_leaf: true, page: 1, root: false },
      { level: 2, is_leaf: true, page: 2, root: false },
    ]);

    const search = await request(server())
      .post('/api/knowledge/search')
      .set(t.auth(uniqueUser()))
      .send({ query: 'How often should I descale the Zephyr kettle?', top_k: 3 })
      .expect(200);
    expect(search.body.chunks[0]).toMatchObject({ source: 'zephyr-kettle.pdf', page: 2, rrf_rank: 1 });
    expect(search.body.chunks[0].text).toMatch(/white vinegar/);
    expect(search.body.rag_trace).toMatchObject({
      retrieval_mode: 'hybrid',
      top_k: 3,
      recall_k: 12,
      recall_k_source: 'multiplier',
      recall_multiplier: 4,
      recall_k_config_error: null,
      initial_chunk_level: 2,
      final_empty: false,
    });
    expect(search.body.rag_trace.recalled_count).toBeGreaterThanOrEqual(search.body.chunks.length);
  });

  it('splits long text into parents and overlapping leaves, and finds Chinese with a Chinese query', async () => {
    const text = Array.from({ length: 12 }, (_, i) => `第${i + 1}条：星辰牌净水器的滤芯每${i + 3}个月更换一次，更换后需冲洗五分钟。`).join('\n');
    const res = await upload(admin(), '星辰净水器.txt', Buffer.from(text, 'utf8')).expect(201);
    expect(res.body.document.chunk_count).toBeGreaterThan(res.body.document.leaf_count);
    expect(res.body.document.leaf_count).toBeGreaterThan(2);
    const [{ longest }] = await t.dataSource.query(
      `SELECT max(length(text))::int AS longest FROM knowledge_chunks WHERE document_id = $1 AND is_leaf`,
      [res.body.document.id],
    );
    expect(longest).toBeLessThanOrEqual(200);
    const search = await request(server())
      .post('/api/knowledge/search')
      .set(t.auth(uniqueUser()))
      .send({ query: '星辰净水器滤芯多久更换？' })
      .expect(200);
    expect(search.body.chunks[0].source).toBe('星辰净水器.txt');
  });

  it('does not store identical content twice', async () => {
    const data = Buffer.from('# Duplicate\nThe same bytes, uploaded twice.', 'utf8');
    const first = await upload(admin(), 'dup-a.md', data).expect(201);
    const second = await upload(admin(), 'dup-b.md', data).expect(200);
    expect(second.body).toMatchObject({ duplicate: true, document: { id: first.body.document.id, filename: 'dup-a.md' } });
    const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM knowledge_documents WHERE filename LIKE 'dup-%'`);
    expect(count).toBe(1);
  });

  it('rejects what it cannot store with a 4xx naming the problem, storing nothing', async () => {
    const before = (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents'))[0].n;
    const noAdmin = await upload(t.auth(uniqueUser()), 'a.md', Buffer.from('hello')).expect(403);
    expect(noAdmin.body.message).toMatch(/administrators/);
    expect((await upload(admin(), 'photo.png', Buffer.from('png')).expect(415)).body.message).toMatch(/only .txt, .md and .pdf/);
    expect((await upload(admin(), 'bad.txt', Buffer.from([0xff, 0xfe, 0xfa])).expect(422)).body.message).toMatch(/not valid UTF-8/);
    expect((await upload(admin(), 'fake.pdf', Buffer.from('not a pdf at all')).expect(422)).body.message).toMatch(/not a PDF/);
    expect((await upload(admin(), 'empty.md', Buffer.from('   ')).expect(422)).body.message).toMatch(/empty/);
    expect((await upload(admin(), 'big.txt', Buffer.alloc(11 * 1024 * 1024, 'a')).expect(413)).body.statusCode).toBe(413);
    const missing = await request(server()).post('/api/knowledge/documents').set(admin()).field('other', 'x').expect(400);
    expect(missing.body.message).toMatch(/file is missing/);
    const after = (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents'))[0].n;
    expect(after).toBe(before);
  });

  it('deletes a document with its chunks (admin only), then answers 404', async () => {
    const res = await upload(admin(), 'temporary.md', Buffer.from('# Temp\nA document about the Quokka lamp.', 'utf8')).expect(201);
    const id = res.body.document.id;
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(t.auth(uniqueUser())).expect(403);
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(admin()).expect(200);
    const [{ count }] = await t.dataSource.query('SELECT count(*)::int AS count FROM knowledge_chunks WHERE document_id = $1', [id]);
    expect(count).toBe(0);
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(admin()).expect(404);
    const search = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: 'Quokka lamp' }).expect(200);
    expect(search.body.chunks.map((c: { source: string }) => c.source)).not.toContain('temporary.md');
  });

  it('reports an invalid RAG_RECALL_K in the trace and falls back to the multiplier', async () => {
    const other = await createTestApp({ RAG_RECALL_K: 'lots', RAG_RECALL_MULTIPLIER: '3' });
    try {
      const res = await request(other.app.getHttpServer())
        .post('/api/knowledge/search')
        .set(other.auth(uniqueUser()))
        .send({ query: 'warranty', top_k: 2 })
        .expect(200);
      expect(res.body.rag_trace).toMatchObject({
        recall_k: 6,
        recall_k_source: 'multiplier',
        recall_k_config_error: 'RAG_RECALL_K="lots" is not an integer between 1 and 1000',
      });
    } finally {
      await other.close();
    }
    await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: '' }).expect(400);
  });
});

describe('Retrieval pipeline stages: auto-merge and rerank', () => {
  let rerankServer: import('node:http').Server;
  let rerankUrl = '';
  let rerankDelayMs = 0;
  const pendingReplies = new Set<NodeJS.Timeout>();
  let rerankCalls: Array<{ query: string; documents: string[] }> = [];

  beforeAll(async () => {
    const http = await import('node:http');
    rerankServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const request = JSON.parse(body) as { query: string; documents: string[] };
        rerankCalls.push(request);
        const timer = setTimeout(() => {
          pendingReplies.delete(timer);
          // Scores the passages by how often they say "vinegar": the fake's own notion of relevance.
          const results = request.documents.map((doc, index) => ({ index, relevance_score: Math.min(1, (doc.match(/vinegar/gi) ?? []).length / 2) }));
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ results }));
        }, rerankDelayMs);
        pendingReplies.add(timer);
      });
    });
    await new Promise<void>((resolve) => rerankServer.listen(0, '127.0.0.1', resolve));
    rerankUrl = `http://127.0.0.1:${(rerankServer.address() as import('node:net').AddressInfo).port}/v1/rerank`;
  });
  afterAll(async () => {
    // Replies still delayed (the timeout test's) would keep the process alive after the run.
    for (const timer of pendingReplies) clearTimeout(timer);
    rerankServer.closeAllConnections();
    await new Promise((resolve) => rerankServer.close(resolve));
  });

  it('merges recalled siblings into their parent when enough of them were recalled', async () => {
    const app = await createTestApp({ KNOWLEDGE_CHUNK_SIZES: '400,120', KNOWLEDGE_CHUNK_OVERLAP: '0', RAG_AUTO_MERGE_THRESHOLD: '0.5' });
    try {
      const text = 'The Nimbus umbrella opens with one button. The Nimbus umbrella resists wind up to 90 km/h. The Nimbus umbrella folds to 25 cm.';
      await request(app.app.getHttpServer())
        .post('/api/knowledge/documents')
        .set(app.auth(uniqueUser('admin'), { role: 'admin' }))
        .attach('file', Buffer.from(`# Nimbus\n${text}`, 'utf8'), 'nimbus.md')
        .expect(201);
      const res = await request(app.app.getHttpServer())
        .post('/api/knowledge/search')
        .set(app.auth(uniqueUser()))
        .send({ query: 'Nimbus umbrella', top_k: 3 })
        .expect(200);
      const trace = res.body.rag_trace;
      expect(trace).toMatchObject({ auto_merge_enabled: true, auto_merge_applied: true, auto_merge_threshold: 0.5, auto_merge_level: 1 });
      expect(trace.auto_merge_replaced_count).toBeGreaterThanOrEqual(2);
      // Each merged parent replaces two or more children.
      expect(trace.candidates_after_merge).toBeLessThan(trace.recalled_count);
      expect(trace.candidates_after_merge).toBeGreaterThan(trace.recalled_count - trace.auto_merge_replaced_count);
      expect(trace.candidates_after_merge).toBeLessThanOrEqual(trace.recalled_count - trace.auto_merge_replaced_count / 2);
      const nimbus = res.body.chunks.find((c: { source: string }) => c.source === 'nimbus.md');
      expect(nimbus.text).toContain('opens with one button');
      expect(nimbus.text).toContain('folds to 25 cm');
    } finally {
      await app.close();
    }
  });

  it('reranks through an HTTP rerank API and filters by the minimum relevance', async () => {
    rerankCalls = [];
    const app = await createTestApp({ RERANK_PROVIDER: 'http', RERANK_URL: rerankUrl, RERANK_MODEL: 'fake-reranker', RAG_MIN_RELEVANCE: '0.4' });
    try {
      const res = await request(app.app.getHttpServer())
        .post('/api/knowledge/search')
        .set(app.auth(uniqueUser()))
        .send({ query: 'How should I descale the kettle?', top_k: 3 })
        .expect(200);
      expect(rerankCalls).toHaveLength(1);
      expect(rerankCalls[0].query).toBe('How should I descale the kettle?');
      const trace = res.body.rag_trace;
      expect(trace).toMatchObject({
        rerank_enabled: true,
        rerank_applied: true,
        rerank_model: 'fake-reranker',
        rerank_endpoint: rerankUrl,
        rerank_error: null,
        min_relevance: 0.4,
      });
      expect(trace.rerank_input_count).toBe(rerankCalls[0].documents.length);
      expect(trace.after_threshold_count).toBe(res.body.chunks.length);
      for (const chunk of res.body.chunks) expect(chunk.rerank_score).toBeGreaterThanOrEqual(0.4);
      expect(res.body.chunks[0].text).toMatch(/vinegar/);
    } finally {
      await app.close();
    }
  });

  it('keeps the fused order and says why when the rerank API times out', async () => {
    rerankDelayMs = 1500;
    const app = await createTestApp({ RERANK_PROVIDER: 'http', RERANK_URL: rerankUrl, RERANK_TIMEOUT_MS: '200' });
    try {
      const res = await request(app.app.getHttpServer())
        .post('/api/knowledge/search')
        .set(app.auth(uniqueUser()))
        .send({ query: 'Aurora X1 factory reset', top_k: 3 })
        .expect(200);
      expect(res.body.rag_trace).toMatchObject({
        rerank_enabled: true,
        rerank_applied: false,
        rerank_error: 'rerank timed out after 200 ms',
        rerank_timeout_ms: 200,
        min_relevance: null,
        final_empty: false,
      });
      expect(res.body.chunks.map((c: { rrf_rank: number }) => c.rrf_rank)).toEqual(
        [...res.body.chunks.map((c: { rrf_rank: number }) => c.rrf_rank)].sort((a: number, b: number) => a - b),
      );
      expect(res.body.chunks[0].rerank_score).toBeUndefined();
    } finally {
      rerankDelayMs = 0;
      await app.close();
    }
  });
});
