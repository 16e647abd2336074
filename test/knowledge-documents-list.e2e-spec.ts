import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DeletableIngests1764979200080 } from '../src/database/migrations/1764979200080-DeletableIngests.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** Issue 21, item 10: the document list is paged (limit, cursor) and its counts are figures stored with each document. */
const text = (label: string, parts: number) =>
  Buffer.from(`# ${label}\n${Array.from({ length: parts }, (_, i) => `The ${label} manual, part ${i}: 说明书第${i}节。`).join('\n')}`, 'utf8');

interface Listed {
  id: string;
  filename: string;
  chunk_count: number;
  leaf_count: number;
}

describe('Listing knowledge documents', () => {
  let t: TestApp;
  let database: string;
  const list = (query: string) => request(t.app.getHttpServer()).get(`/api/knowledge/documents${query}`).set(adminAuth(t));

  /** Every page of `limit` documents, following next_cursor to the end. */
  const allPages = async (limit: number) => {
    const pages: Listed[][] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await list(`?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200);
      pages.push(res.body.documents);
      cursor = res.body.next_cursor;
    } while (cursor);
    return pages;
  };

  /** The documents with their counts read from their chunks, newest first. */
  const counted = async () =>
    (await t.dataSource.query(`
      SELECT d.id, (SELECT count(*)::int FROM knowledge_chunks c WHERE c.document_id = d.id) AS chunk_count,
             (SELECT count(*)::int FROM knowledge_chunks c WHERE c.document_id = d.id AND c.is_leaf) AS leaf_count
        FROM knowledge_documents d ORDER BY d.created_at DESC, d.id DESC`)) as Array<{ id: string; chunk_count: number; leaf_count: number }>;

  beforeAll(async () => {
    database = freshDatabaseUrl();
    await ensureDatabase(database);
    t = await createTestApp({ DATABASE_URL: database, KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '400,120', KNOWLEDGE_CHUNK_OVERLAP: '0' });
    for (let i = 1; i <= 5; i += 1) {
      await request(t.app.getHttpServer())
        .post('/api/knowledge/documents?wait=true')
        .set(adminAuth(t))
        .attach('file', text(`Heron ${i}`, 10 * i), `heron-${i}.md`)
        .expect(201);
    }
  });

  afterAll(async () => {
    await t.close();
    await dropDatabase(database);
  });

  it('pages newest first with limit and cursor, each document once, with the counts of its chunks', async () => {
    const expected = await counted();
    expect(expected).toHaveLength(5);
    const pages = await allPages(2);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    const listed = pages.flat().map(({ id, chunk_count, leaf_count }) => ({ id, chunk_count, leaf_count }));
    expect(listed).toEqual(expected);
    expect(new Set(expected.map((d) => d.leaf_count)).size).toBe(5);

    // Without a limit: the first page of the default size, here every document, and no next page (as before paging).
    const all = await list('').expect(200);
    expect({ ids: all.body.documents.map((d: Listed) => d.id), next_cursor: all.body.next_cursor }).toEqual({ ids: expected.map((d) => d.id), next_cursor: null });
  });

  it('keeps every document once across pages when several share a creation time', async () => {
    await t.dataSource.query(`UPDATE knowledge_documents SET created_at = '2026-01-01T00:00:00.123456Z' WHERE filename IN ('heron-2.md', 'heron-3.md', 'heron-4.md')`);
    const expected = (await counted()).map((d) => d.id);
    const pages = await allPages(1);
    expect(pages.flat().map((d) => d.id)).toEqual(expected);
  });

  it('backfills the stored leaf counts when the migration runs on documents stored before it', async () => {
    const migration = new DeletableIngests1764979200080();
    const runner = t.dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const pages = await allPages(100);
    expect(pages.flat().map(({ id, chunk_count, leaf_count }) => ({ id, chunk_count, leaf_count }))).toEqual(await counted());
  });

  it.each(['?cursor=garbage', `?cursor=${Buffer.from('1.not-a-uuid').toString('base64url')}`, '?limit=0', '?limit=1001', '?limit=ten'])('answers %s with 400', async (query) => {
    const res = await list(query).expect(400);
    if (query.startsWith('?cursor')) expect(res.body.code).toBe('invalid_cursor');
  });
});
