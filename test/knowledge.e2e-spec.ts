import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { HybridRecall } from '../src/knowledge/retrieval/hybrid-recall.service.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { assemblePdf, makePdf } from './support/make-pdf.js';
import { everyonesScope } from './support/collections.js';

/** A PDF whose text extraction yields a NUL character: its font maps the code of "~" to U+0000 (ToUnicode). */
function pdfWithNulInText(): Buffer {
  const cmap =
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Custom def /CMapType 2 def\n' +
    '1 begincodespacerange <00> <FF> endcodespacerange\n1 beginbfchar <7E> <0000> endbfchar\n' +
    'endcmap CMapName currentdict /CMap defineresource pop end end';
  const stream = 'BT /F1 12 Tf 72 720 Td (The Quasar toaster~browns bread in ninety seconds.) Tj ET';
  const objects = [
    '',
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    `<< /Length ${cmap.length} >>\nstream\n${cmap}\nendstream`,
  ];
  return assemblePdf(objects);
}

/** About `bytes` of mixed Chinese and English text, deterministic, in short lines of sentences. */
function mixedText(bytes: number): string {
  const en = ['router', 'firmware', 'warranty', 'battery', 'kettle', 'descale', 'signal', 'network', 'update', 'refund', 'shipping', 'member'];
  const zh = ['路由器', '固件', '保修', '电池', '水壶', '除垢', '信号', '网络', '更新', '退款', '运费', '积分', '滤芯', '更换'];
  let seed = 7;
  const pick = <T>(list: T[]) => list[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % list.length];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const sentence =
      i % 2 === 0
        ? `Note ${i}: the ${pick(en)} ${pick(en)} needs a ${pick(en)} check every ${i % 30} days.`
        : `第${i}条：${pick(zh)}的${pick(zh)}每${i % 12}个月检查一次，${pick(zh)}${pick(zh)}编号${i}。`;
    parts.push(i % 6 === 5 ? `${sentence}\n` : `${sentence} `);
    size += Buffer.byteLength(sentence) + 1;
  }
  return parts.join('');
}

describe('Knowledge base: documents, chunk hierarchy, hybrid retrieval', () => {
  let t: TestApp;
  const server = () => t.app.getHttpServer();
  const upload = (auth: Record<string, string>, name: string, data: Buffer) => request(server()).post('/api/knowledge/documents?wait=true').set(auth).attach('file', data, name);
  /**
   * A multipart upload with the file name given as raw header bytes (as a browser sends them: UTF-8, read by multer as
   * latin1), or as an RFC 5987 `filename*` parameter when `nameParam` is given.
   */
  const rawUpload = (auth: Record<string, string>, nameBytes: Buffer, data: Buffer, nameParam?: string) => {
    const boundary = `----boundary${randomUUID()}`;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; `, 'latin1'),
      nameParam ? Buffer.from(nameParam, 'latin1') : Buffer.concat([Buffer.from('filename="'), nameBytes, Buffer.from('"')]),
      Buffer.from('\r\nContent-Type: application/octet-stream\r\n\r\n', 'latin1'),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1'),
    ]);
    return request(server()).post('/api/knowledge/documents?wait=true').set(auth).set('Content-Type', `multipart/form-data; boundary=${boundary}`).send(body);
  };
  const documentCount = async () => (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents'))[0].n as number;

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
    const pdf = makePdf(['The Zephyr kettle boils one litre of water in four minutes.', 'Descale the Zephyr kettle every month with white vinegar.']);
    const res = await upload(adminAuth(t), 'zephyr-kettle.pdf', pdf).expect(201);
    expect(res.body.duplicate).toBe(false);
    expect(res.body.document).toMatchObject({ filename: 'zephyr-kettle.pdf', content_type: 'application/pdf', page_count: 2, leaf_count: 2 });
    const levels = await t.dataSource.query(`SELECT level, is_leaf, page, parent_id IS NULL AS root FROM knowledge_chunks WHERE document_id = $1 ORDER BY level, ordinal`, [
      res.body.document.id,
    ]);
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
    // Each candidate carries its rank in each recall leg (null where that leg did not find it), beside the fused rank.
    for (const chunk of search.body.chunks as Array<{ fulltext_rank: number | null; dense_rank: number | null }>) {
      expect(chunk.fulltext_rank === null || chunk.fulltext_rank >= 1).toBe(true);
      expect(chunk.dense_rank === null || chunk.dense_rank >= 1).toBe(true);
      expect(chunk.fulltext_rank ?? chunk.dense_rank).not.toBeNull();
    }
    expect(search.body.chunks.some((chunk: { fulltext_rank: number | null }) => chunk.fulltext_rank !== null)).toBe(true);
    expect(search.body.chunks.some((chunk: { dense_rank: number | null }) => chunk.dense_rank !== null)).toBe(true);
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
    // recalled_count is what the recall stage returned: the two rankings fused by reciprocal rank fusion, cut to recall_k (12).
    // Here the rankings are asked for separately and fused by the test itself; the corpus has far more than 12 leaves the dense
    // leg scores positively, so 12 are recalled.
    const recall = t.app.get(HybridRecall);
    const query = 'How often should I descale the Zephyr kettle?';
    const scope = await everyonesScope(t);
    const rankings = [await recall.fullTextRanking(query, 12, scope), await recall.denseRanking(query, 12, scope)];
    expect(rankings[1]).toHaveLength(12);
    const fusedScore = new Map<string, number>();
    for (const ranking of rankings) ranking.forEach((id, i) => fusedScore.set(id, (fusedScore.get(id) ?? 0) + 1 / (60 + i + 1)));
    const recalled = [...fusedScore.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 12)
      .map(([id]) => id);
    const trace = search.body.rag_trace;
    expect(trace.recalled_count).toBe(recalled.length);
    expect(trace.recalled_count).toBe(12);
    // Auto-merge (threshold 0.5): a parent replaces its recalled children when at least two and half of its children were recalled.
    const family: Array<{ id: string; parent_id: string; siblings: number }> = await t.dataSource.query(
      `SELECT c.id::text, c.parent_id::text, (SELECT count(*)::int FROM knowledge_chunks s WHERE s.parent_id = c.parent_id) AS siblings
         FROM knowledge_chunks c WHERE c.id = ANY($1::bigint[])`,
      [recalled],
    );
    const byParent = new Map<string, string[]>();
    for (const leaf of family) byParent.set(leaf.parent_id, [...(byParent.get(leaf.parent_id) ?? []), leaf.id]);
    const merging = [...byParent.entries()].filter(([parent, children]) => children.length >= 2 && children.length / family.find((f) => f.parent_id === parent)!.siblings >= 0.5);
    const replaced = merging.reduce((sum, [, children]) => sum + children.length, 0);
    const expectedIds = new Set([...recalled.filter((id) => !merging.some(([, children]) => children.includes(id))), ...merging.map(([parent]) => parent)]);
    expect(trace).toMatchObject({
      auto_merge_applied: merging.length > 0,
      auto_merge_replaced_count: replaced,
      candidates_after_merge: expectedIds.size,
      rerank_input_count: expectedIds.size,
    });
    expect(new Set(trace.initial_chunks.map((c: { chunk_id: string }) => c.chunk_id))).toEqual(expectedIds);
  });

  it('splits long text into parents and overlapping leaves, and finds Chinese with a Chinese query', async () => {
    const text = Array.from({ length: 12 }, (_, i) => `第${i + 1}条：星辰牌净水器的滤芯每${i + 3}个月更换一次，更换后需冲洗五分钟。`).join('\n');
    const res = await upload(adminAuth(t), '星辰净水器.txt', Buffer.from(text, 'utf8')).expect(201);
    const rows: Array<{ id: string; parent_id: string | null; level: number; is_leaf: boolean; text: string }> = await t.dataSource.query(
      `SELECT id::text, parent_id::text, level, is_leaf, text FROM knowledge_chunks WHERE document_id = $1 ORDER BY level, ordinal`,
      [res.body.document.id],
    );
    const parents = rows.filter((r) => r.level === 1);
    const leaves = rows.filter((r) => r.level === 2);
    // The counts reported are the rows stored; the 380-odd characters fit one 600-character parent, cut into 200-character leaves.
    expect(text.length).toBeLessThan(600);
    expect(res.body.document).toMatchObject({ chunk_count: rows.length, leaf_count: leaves.length });
    expect(parents).toHaveLength(1);
    expect(leaves.length).toBeGreaterThan(2);
    for (const leaf of leaves) {
      expect(leaf.is_leaf).toBe(true);
      expect(leaf.text.length).toBeLessThanOrEqual(200);
      expect(parents.find((p) => p.id === leaf.parent_id)!.text).toContain(leaf.text.slice(-20));
    }
    // Each leaf after the first repeats the end of the one before (KNOWLEDGE_CHUNK_OVERLAP=30, cut at a sentence when it fits).
    for (let i = 1; i < leaves.length; i += 1) expect(leaves[i].text.startsWith(leaves[i - 1].text.slice(-30))).toBe(true);
    // Every line of the text is in some leaf.
    for (const line of text.split('\n')) expect(leaves.some((leaf) => leaf.text.includes(line))).toBe(true);
    const search = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: '星辰净水器滤芯多久更换？' }).expect(200);
    expect(search.body.chunks[0].source).toBe('星辰净水器.txt');
  });

  it('finds a document in the other language than the question by the translations of its words, in the full-text leg', async () => {
    await upload(adminAuth(t), '雾岛加湿器.txt', Buffer.from('雾岛加湿器的水箱每周清洁一次，用软布擦洗。', 'utf8')).expect(201);
    const search = await request(server())
      .post('/api/knowledge/search')
      .set(t.auth(uniqueUser()))
      .send({ query: 'How often should I clean the humidifier tank?', top_k: 3 })
      .expect(200);
    // clean, humidifier and tank, each through its Chinese translations (清洁, 加湿器, 水箱…).
    expect(search.body.rag_trace.full_text_translated_terms).toBeGreaterThan(0);
    const found = (search.body.chunks as Array<{ source: string; fulltext_rank: number | null }>).find((chunk) => chunk.source === '雾岛加湿器.txt');
    expect(found?.fulltext_rank).toEqual(expect.any(Number));
  });

  it('does not store identical content twice', async () => {
    const data = Buffer.from('# Duplicate\nThe same bytes, uploaded twice.', 'utf8');
    const first = await upload(adminAuth(t), 'dup-a.md', data).expect(201);
    const second = await upload(adminAuth(t), 'dup-b.md', data).expect(200);
    expect(second.body).toMatchObject({ duplicate: true, document: { id: first.body.document.id, filename: 'dup-a.md' } });
    const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM knowledge_documents WHERE filename LIKE 'dup-%'`);
    expect(count).toBe(1);
  });

  it('rejects what it cannot store with a 4xx naming the problem, storing nothing', async () => {
    const before = (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents'))[0].n;
    const noAdmin = await upload(t.auth(uniqueUser()), 'a.md', Buffer.from('hello')).expect(403);
    expect(noAdmin.body.message).toMatch(/administrators/);
    expect((await upload(adminAuth(t), 'photo.png', Buffer.from('png')).expect(415)).body.message).toMatch(
      /only .txt, .md, .pdf, .docx, .xlsx, .csv, .html and .htm files are accepted/,
    );
    expect((await upload(adminAuth(t), 'bad.txt', Buffer.from([0xff, 0xfe, 0xfa])).expect(422)).body.message).toMatch(/not valid UTF-8/);
    expect((await upload(adminAuth(t), 'fake.pdf', Buffer.from('not a pdf at all')).expect(422)).body.message).toMatch(/not a PDF/);
    expect((await upload(adminAuth(t), 'empty.md', Buffer.from('   ')).expect(422)).body.message).toMatch(/empty/);
    expect((await upload(adminAuth(t), 'big.txt', Buffer.alloc(11 * 1024 * 1024, 'a')).expect(413)).body.statusCode).toBe(413);
    // A name with a path separator is refused, not cut down to what follows it ("\\ .txt" was stored as " .txt").
    for (const encoded of ['%5C%20.txt', 'dir%2Fnotes.md', 'C%3A%5Cfakepath%5Cnotes.md']) {
      const res = await rawUpload(adminAuth(t), Buffer.alloc(0), Buffer.from('hello'), `filename*=UTF-8''${encoded}`).expect(400);
      expect(res.body.message).toMatch(/must not contain "\/" or "\\"/);
    }
    const missing = await request(server()).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).field('other', 'x').expect(400);
    expect(missing.body.message).toMatch(/file is missing/);
    const after = (await t.dataSource.query('SELECT count(*)::int AS n FROM knowledge_documents'))[0].n;
    expect(after).toBe(before);
  });

  it('refuses a document with nothing visible (white space, zero-width and direction marks only) as it refuses an empty one, storing nothing', async () => {
    const before = await documentCount();
    const invisible = '\u200f \u200b\n\u200c\u200d\u2060\u00a0\t\u200e';
    for (const [name, data] of [
      ['rtl-mark.txt', Buffer.from('\u200f')],
      ['invisible.txt', Buffer.from(invisible)],
      ['invisible.md', Buffer.from(`\ufeff${invisible}`)],
      ['invisible.csv', Buffer.from(invisible)],
    ] as const) {
      const res = await upload(adminAuth(t), name, data);
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 422, code: 'unreadable_document' });
      expect(res.body.message).toBe(`${name} is empty (it holds no visible text, only white space or invisible characters)`);
    }
    // HTML whose markup holds only invisible text: refused when parsed.
    const html = await upload(adminAuth(t), 'invisible.html', Buffer.from(`<html><body><p>${invisible}</p></body></html>`));
    expect({ status: html.status, code: html.body.code }).toEqual({ status: 422, code: 'unreadable_document' });
    expect(html.body.message).toMatch(/invisible\.html has no extractable text/);
    expect(await documentCount()).toBe(before);
    // One visible character among them is a document.
    await upload(adminAuth(t), 'one-visible.txt', Buffer.from(`${invisible}Zephyr-7 kettle`)).expect(201);
  });

  it('refuses text PostgreSQL cannot store: NUL in the content (422), bad file names (400), storing nothing', async () => {
    const before = await documentCount();
    const nul = await upload(adminAuth(t), 'nul.txt', Buffer.from('The Orion lamp\u0000 has a dimmer.', 'utf8')).expect(422);
    expect(nul.body.message).toBe('nul.txt contains a NUL character (U+0000)');
    const nulMd = await upload(adminAuth(t), 'nul.md', Buffer.from('# Orion\n\u0000', 'utf8')).expect(422);
    expect(nulMd.body.message).toMatch(/NUL character/);
    const ok = Buffer.from('The Orion lamp has a dimmer.', 'utf8');
    // A NUL byte in the header itself is refused by the multipart parser; percent-encoded in filename*, it reaches the service.
    const nulName = await rawUpload(adminAuth(t), Buffer.alloc(0), ok, "filename*=UTF-8''bad%00name.txt").expect(400);
    expect(nulName.body.message).toBe('file name contains a NUL character (U+0000)');
    expect((await rawUpload(adminAuth(t), Buffer.from('bad\u0000name.txt'), ok).expect(400)).body.message).toMatch(/Malformed part header/);
    // Control characters too: raw in the header the multipart parser refuses them, so they are sent percent-encoded.
    const encoded: Array<[string, RegExp]> = [
      ["filename*=UTF-8''bad%01name.txt", /^file name contains a control character$/],
      ["filename*=UTF-8''tab%09name.txt", /^file name contains a control character$/],
      ["filename*=UTF-8''bad%C2%85name.txt", /^file name contains a control character$/],
      // Bytes that are not UTF-8, which the parser replaces by U+FFFD: refused, not stored altered.
      ["filename*=UTF-8''lone%ED%A0%80.txt", /^file name is not valid UTF-8/],
    ];
    const raw: Array<[Buffer, RegExp]> = [
      // A lone surrogate sent as UTF-8 (ED A0 80) and a stray continuation byte: not UTF-8 at all.
      [Buffer.concat([Buffer.from('lone'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('.txt')]), /^file name is not valid UTF-8/],
      [Buffer.concat([Buffer.from('stray'), Buffer.from([0x80]), Buffer.from('.txt')]), /^file name is not valid UTF-8/],
      [Buffer.from(`${'n'.repeat(252)}.txt`, 'utf8'), /^file name is longer than 255 characters \(256\)$/],
    ];
    const cases = [
      ...encoded.map(([param, message]) => ({ label: param, send: () => rawUpload(adminAuth(t), Buffer.alloc(0), ok, param), message })),
      ...raw.map(([bytes, message]) => ({ label: bytes.toString('latin1'), send: () => rawUpload(adminAuth(t), bytes, ok), message })),
    ];
    for (const { label, send, message } of cases) {
      const res = await send();
      expect({ label, status: res.status, message: res.body.message }).toEqual({ label, status: 400, message: expect.stringMatching(message) });
    }
    expect(await documentCount()).toBe(before);
  });

  it('keeps a long non-Latin file name intact: 255 characters are allowed, counted as characters', async () => {
    const name = `${'📄'.repeat(200)}手册${'x'.repeat(49)}.txt`; // 255 characters, 400-odd UTF-16 units
    expect(Array.from(name)).toHaveLength(255);
    const res = await rawUpload(adminAuth(t), Buffer.from(name, 'utf8'), Buffer.from(`The Vega clock ${randomUUID()} chimes hourly.`)).expect(201);
    expect(res.body.document.filename).toBe(name);
    const [{ filename }] = await t.dataSource.query('SELECT filename FROM knowledge_documents WHERE id = $1', [res.body.document.id]);
    expect(filename).toBe(name);
    await request(server()).delete(`/api/knowledge/documents/${res.body.document.id}`).set(adminAuth(t)).expect(200);
  });

  it('stores a PDF whose extracted text has a NUL character, without it', async () => {
    const res = await upload(adminAuth(t), 'quasar-toaster.pdf', pdfWithNulInText()).expect(201);
    const rows: Array<{ text: string }> = await t.dataSource.query('SELECT text FROM knowledge_chunks WHERE document_id = $1 AND is_leaf', [res.body.document.id]);
    expect(rows.map((r) => r.text)).toEqual(['The Quasar toasterbrowns bread in ninety seconds.']);
    await request(server()).delete(`/api/knowledge/documents/${res.body.document.id}`).set(adminAuth(t)).expect(200);
  });

  it('keeps answering other requests while it prepares a large upload (parsing, chunking, search text, embeddings)', async () => {
    // Larger chunks than the file's default: fewer rows to store, the same text to read, so the test stays quick.
    // A database of its own keeps its leaves out of the pgvector index the other tests search (deleted rows stay in an
    // HNSW graph until VACUUM and crowd out live neighbours).
    const database = freshDatabaseUrl();
    await ensureDatabase(database);
    const app = await createTestApp({
      DATABASE_URL: database,
      KNOWLEDGE_CHUNK_SIZES: '4000,1500',
      KNOWLEDGE_CHUNK_OVERLAP: '0',
      KNOWLEDGE_SEED_ON_START: 'false',
    });
    const events: string[] = [];
    const documents = app.app.get(DocumentsService);
    const ingest = documents.ingest;
    let started!: () => void;
    const ingestStarted = new Promise<void>((resolve) => (started = resolve));
    documents.ingest = function (this: DocumentsService, ...args: Parameters<DocumentsService['ingest']>) {
      events.push('ingest');
      started();
      return ingest.apply(this, args);
    };
    // The document row is inserted once its chunks are ready: the end of the CPU-heavy preparation.
    const createQueryRunner = app.dataSource.createQueryRunner;
    app.dataSource.createQueryRunner = function (this: typeof app.dataSource, ...args: Parameters<typeof createQueryRunner>) {
      const runner = createQueryRunner.apply(this, args);
      const run = runner.query;
      runner.query = function (this: typeof runner, ...queryArgs: unknown[]) {
        if (/INSERT INTO knowledge_documents/.test(String(queryArgs[0]))) events.push('storing');
        return (run as (...a: unknown[]) => Promise<unknown>).apply(this, queryArgs);
      } as typeof run;
      return runner;
    };
    let id: string;
    try {
      const text = mixedText(3 * 1024 * 1024);
      const uploading = request(app.app.getHttpServer())
        .post('/api/knowledge/documents?wait=true')
        .set(adminAuth(app))
        .attach('file', Buffer.from(text, 'utf8'), 'large-mixed.txt')
        .then((res) => {
          events.push('uploaded');
          return res;
        });
      await ingestStarted;
      while (!events.includes('uploaded') && !events.includes('storing')) {
        const health = await request(app.app.getHttpServer()).get('/health');
        events.push(`health ${health.status}`);
      }
      const res = await uploading;
      expect(res.status).toBe(201);
      id = res.body.document.id;
      const [{ leaves }] = await app.dataSource.query('SELECT count(*)::int AS leaves FROM knowledge_chunks WHERE document_id = $1 AND is_leaf', [id]);
      expect(res.body.document.leaf_count).toBe(leaves);
      expect(leaves).toBeGreaterThan(500);
      // /health answered (several times) after the upload started and before its preparation ended.
      const window = events.slice(events.indexOf('ingest') + 1, events.indexOf('storing'));
      expect(events.indexOf('storing')).toBeGreaterThan(0);
      expect(window.filter((e) => e === 'health 200').length).toBeGreaterThanOrEqual(3);
    } finally {
      documents.ingest = ingest;
      app.dataSource.createQueryRunner = createQueryRunner;
      await app.close();
      await dropDatabase(database);
    }
  }, 60_000);

  it('bounds the work of a query with hundreds of distinct words: at most 32 full-text terms, still an answer', async () => {
    // 400 distinct made-up words after a real question (about 1 700 characters, under the request limit).
    const filler = Array.from({ length: 400 }, (_, i) => `q${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    expect(new Set(filler).size).toBe(400);
    const query = `How do I reset the Aurora X1 router to factory settings? ${filler.join(' ')}`;
    const tsqueries: string[] = [];
    const createQueryRunner = t.dataSource.createQueryRunner;
    t.dataSource.createQueryRunner = function (this: typeof t.dataSource, ...args: Parameters<typeof createQueryRunner>) {
      const runner = createQueryRunner.apply(this, args);
      const run = runner.query;
      runner.query = function (this: typeof runner, sql: string, params?: unknown[], ...rest: unknown[]) {
        if (/to_tsquery/.test(sql) && typeof params?.[0] === 'string') tsqueries.push(params[0]);
        return (run as (...a: unknown[]) => Promise<unknown>).apply(this, [sql, params, ...rest]);
      } as typeof run;
      return runner;
    };
    try {
      const res = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query, top_k: 3 }).expect(200);
      // The full-text leg still finds the manual the question is about (the rerank may judge the noisy query weak).
      expect(res.body.rag_trace.initial_chunks.map((c: { source: string }) => c.source)).toContain('aurora-x1-router-manual.md');
      expect(res.body.rag_trace).toMatchObject({ full_text_terms: 32, full_text_terms_dropped: expect.any(Number), full_text_error: null });
      expect(res.body.rag_trace.full_text_terms_dropped).toBeGreaterThanOrEqual(400 - 32);
    } finally {
      t.dataSource.createQueryRunner = createQueryRunner;
    }
    expect(tsqueries.length).toBeGreaterThan(0);
    // The question's own words, and the same search in Chinese (its words as the glossary translates them): 32 terms at most each.
    const [own, translated] = [tsqueries.filter((tsquery) => !/[\u3400-\u9fff]/.test(tsquery)), tsqueries.filter((tsquery) => /[\u3400-\u9fff]/.test(tsquery))];
    expect(own.length).toBeGreaterThan(0);
    expect(translated.length).toBeGreaterThan(0);
    for (const tsquery of tsqueries) expect(tsquery.match(/'[^']*'/g)!.length).toBeLessThanOrEqual(32);
    for (const tsquery of own) {
      // The question's own terms come first and are kept.
      expect(tsquery.split(/ [&|] /)).toEqual(expect.arrayContaining(["'reset'", "'aurora'", "'x1'", "'router'", "'factory'"]));
    }
  });

  it('answers from the dense ranking alone, with a 200 saying why, when the full-text ranking hits its statement timeout', async () => {
    const recall = t.app.get(HybridRecall);
    const timeout = recall.statementTimeoutMs;
    recall.statementTimeoutMs = 150;
    // Another session holds an exclusive lock on the chunks, so the full-text statement waits until PostgreSQL cancels it;
    // the lock goes as soon as that happened, letting the dense leg (which has no such timeout) finish.
    const locker = t.dataSource.createQueryRunner();
    await locker.connect();
    await locker.startTransaction();
    await locker.query('LOCK TABLE knowledge_chunks IN ACCESS EXCLUSIVE MODE');
    let unlocked: Promise<void> | undefined;
    const unlock = () => (unlocked ??= locker.rollbackTransaction());
    const cancelled: string[] = [];
    const createQueryRunner = t.dataSource.createQueryRunner;
    t.dataSource.createQueryRunner = function (this: typeof t.dataSource, ...args: Parameters<typeof createQueryRunner>) {
      const runner = createQueryRunner.apply(this, args);
      const run = runner.query;
      runner.query = async function (this: typeof runner, ...queryArgs: unknown[]) {
        try {
          return await (run as (...a: unknown[]) => Promise<unknown>).apply(this, queryArgs);
        } catch (error) {
          if ((error as { driverError?: { code?: string } }).driverError?.code === '57014') {
            cancelled.push(String(queryArgs[0]));
            void unlock();
          }
          throw error;
        }
      } as typeof run;
      return runner;
    };
    try {
      const res = await request(server())
        .post('/api/knowledge/search')
        .set(t.auth(uniqueUser()))
        .send({ query: 'How do I reset the Aurora X1 router to factory settings?', top_k: 3 });
      expect(res.status).toBe(200);
      expect(cancelled).toHaveLength(1);
      expect(cancelled[0]).toMatch(/to_tsquery/);
      expect(res.body.rag_trace).toMatchObject({ full_text_error: 'full-text search cancelled after 150 ms (statement timeout)', final_empty: false });
      expect(res.body.chunks[0].source).toBe('aurora-x1-router-manual.md');
    } finally {
      t.dataSource.createQueryRunner = createQueryRunner;
      recall.statementTimeoutMs = timeout;
      await unlock();
      await locker.release();
    }
  });

  it('deletes a document with its chunks (admin only), then answers 404', async () => {
    const res = await upload(adminAuth(t), 'temporary.md', Buffer.from('# Temp\nA document about the Quokka lamp.', 'utf8')).expect(201);
    const id = res.body.document.id;
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(t.auth(uniqueUser())).expect(403);
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(adminAuth(t)).expect(200);
    const [{ count }] = await t.dataSource.query('SELECT count(*)::int AS count FROM knowledge_chunks WHERE document_id = $1', [id]);
    expect(count).toBe(0);
    await request(server()).delete(`/api/knowledge/documents/${id}`).set(adminAuth(t)).expect(404);
    const search = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: 'Quokka lamp' }).expect(200);
    expect(search.body.chunks.map((c: { source: string }) => c.source)).not.toContain('temporary.md');
  });

  it('reports an invalid RAG_RECALL_K in the trace and falls back to the multiplier', async () => {
    const other = await createTestApp({ RAG_RECALL_K: 'lots', RAG_RECALL_MULTIPLIER: '3' });
    try {
      const res = await request(other.app.getHttpServer()).post('/api/knowledge/search').set(other.auth(uniqueUser())).send({ query: 'warranty', top_k: 2 }).expect(200);
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
        .post('/api/knowledge/documents?wait=true')
        .set(adminAuth(app))
        .attach('file', Buffer.from(`# Nimbus\n${text}`, 'utf8'), 'nimbus.md')
        .expect(201);
      const res = await request(app.app.getHttpServer()).post('/api/knowledge/search').set(app.auth(uniqueUser())).send({ query: 'Nimbus umbrella', top_k: 3 }).expect(200);
      const trace = res.body.rag_trace;
      expect(trace).toMatchObject({ auto_merge_enabled: true, auto_merge_applied: true, auto_merge_threshold: 0.5, auto_merge_level: 1 });
      // The Nimbus text makes one 400-character parent with two 120-character leaves; both are recalled, so the parent
      // replaces them. Whatever else merged is counted from the recall itself, independently of the pipeline.
      const [nimbusParent] = await app.dataSource.query(
        `SELECT c.id::text, (SELECT count(*)::int FROM knowledge_chunks s WHERE s.parent_id = c.id) AS children
           FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = 'nimbus.md' AND c.level = 1`,
      );
      expect(nimbusParent.children).toBe(2);
      const recalled = (await app.app.get(HybridRecall).recall('Nimbus umbrella', trace.recall_k, await everyonesScope(app))).candidates;
      expect(trace.recalled_count).toBe(recalled.length);
      const siblings: Array<{ parent: string; children: number }> = await app.dataSource.query(
        `SELECT p.id::text AS parent, (SELECT count(*)::int FROM knowledge_chunks s WHERE s.parent_id = p.id) AS children
           FROM knowledge_chunks p WHERE p.id = ANY($1::bigint[])`,
        [[...new Set(recalled.map((c) => c.parent_id))]],
      );
      const recalledChildren = (parent: string) => recalled.filter((c) => c.parent_id === parent).length;
      const merging = siblings.filter(({ parent, children }) => recalledChildren(parent) >= 2 && recalledChildren(parent) / children >= 0.5);
      expect(merging.map((m) => m.parent)).toContain(nimbusParent.id);
      const replaced = merging.reduce((sum, { parent }) => sum + recalledChildren(parent), 0);
      expect(trace.auto_merge_replaced_count).toBe(replaced);
      expect(trace.candidates_after_merge).toBe(recalled.length - replaced + merging.length);
      expect(trace.initial_chunks.map((c: { chunk_id: string }) => c.chunk_id)).toContain(nimbusParent.id);
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
      expect(trace.rerank_input_count).toBe(trace.candidates_after_merge);
      // The fake's scores are known: min(1, mentions of "vinegar" / 2); 0.4 keeps the passages that mention it at all.
      const fakeScore = (text: string) => Math.min(1, (text.match(/vinegar/gi) ?? []).length / 2);
      const passing = rerankCalls[0].documents.filter((doc) => fakeScore(doc) >= 0.4);
      expect(passing.length).toBeGreaterThan(0);
      expect(trace.after_threshold_count).toBe(passing.length);
      expect(res.body.chunks).toHaveLength(Math.min(3, passing.length));
      for (const chunk of res.body.chunks) expect(chunk.rerank_score).toBe(fakeScore(chunk.text));
      const best = Math.max(...rerankCalls[0].documents.map(fakeScore));
      expect(res.body.chunks[0].rerank_score).toBe(best);
      expect(res.body.chunks[0].text).toMatch(/vinegar/);
    } finally {
      await app.close();
    }
  });

  it('keeps the fused order and says why when the rerank API times out', async () => {
    rerankDelayMs = 1500;
    const app = await createTestApp({ RERANK_PROVIDER: 'http', RERANK_URL: rerankUrl, RERANK_TIMEOUT_MS: '200' });
    try {
      const res = await request(app.app.getHttpServer()).post('/api/knowledge/search').set(app.auth(uniqueUser())).send({ query: 'Aurora X1 factory reset', top_k: 3 }).expect(200);
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
