import request from 'supertest';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/app-config.js';
import { buildDataSourceOptions, MIGRATIONS } from '../src/database/data-source-options.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { KnowledgeCollections1764979200200 } from '../src/database/migrations/1764979200200-KnowledgeCollections.js';
import { ApiKeyGroups1764979200210 } from '../src/database/migrations/1764979200210-ApiKeyGroups.js';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';
import { adminAuth } from './support/admin.js';
import { createCollection, groupAuth, setAccess, uploadTo } from './support/collections.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET, TEST_REDIS_URL } from './support/test-env.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** Issue 23, item 2: the knowledge base that was is the collection `default`; /api/knowledge/documents are its routes. */
describe('The default collection', () => {
  let t: TestApp;
  let database: string;
  const server = () => t.app.getHttpServer();
  const text = (label: string) => Buffer.from(`# ${label}\nThe ${label} lamp dims to five percent. ${label}台灯可以调到百分之五。`, 'utf8');
  const ids = (res: request.Response) => res.body.documents.map((d: { id: string }) => d.id);

  beforeAll(async () => {
    database = freshDatabaseUrl();
    await ensureDatabase(database);
    // The sample corpus is loaded at the start, into `default`.
    t = await createTestApp({ DATABASE_URL: database, KNOWLEDGE_SEED_ON_START: 'true' });
  });
  afterAll(async () => {
    await t?.close();
    await dropDatabase(database);
  });

  it('holds the sample corpus and is readable by everyone, written by administrators', async () => {
    const user = t.auth(uniqueUser());
    const info = await request(server()).get('/api/knowledge/collections/default').set(user).expect(200);
    expect(info.body).toMatchObject({ id: DEFAULT_COLLECTION_ID, name: 'default', owner: null, role: 'viewer' });
    expect(info.body.document_count).toBeGreaterThan(0);
    const [{ outside }] = await t.dataSource.query('SELECT count(*)::int AS outside FROM knowledge_documents WHERE collection_id <> $1', [DEFAULT_COLLECTION_ID]);
    expect(outside).toBe(0);
    expect((await request(server()).get(`/api/knowledge/collections/${DEFAULT_COLLECTION_ID}`).set(adminAuth(t)).expect(200)).body.role).toBe('owner');
    expect((await request(server()).get('/api/knowledge/collections/default/access').set(user).expect(200)).body.entries).toEqual([{ principal: 'everyone', role: 'viewer' }]);

    const legacy = await request(server()).post('/api/knowledge/documents').set(user).attach('file', text('Userlamp'), 'user.md').expect(403);
    const routed = await request(server()).post('/api/knowledge/collections/default/documents').set(user).attach('file', text('Userlamp'), 'user.md').expect(403);
    expect([legacy.body.code, routed.body.code]).toEqual(['collection_forbidden', 'collection_forbidden']);
    expect(legacy.body.message).toMatch(/administrators/);
  });

  it('has one set of documents under both routes, and none of another collection', async () => {
    const admin = adminAuth(t);
    const viaLegacy = (await request(server()).post('/api/knowledge/documents?wait=true').set(admin).attach('file', text('Legacylamp'), 'legacy.md').expect(201)).body.document;
    expect(viaLegacy.collection_id).toBe(DEFAULT_COLLECTION_ID);
    const viaCollection = await uploadTo(t, admin, 'default', 'routed.md', text('Routedlamp').toString());
    const legacyList = await request(server()).get('/api/knowledge/documents?limit=1000').set(t.auth(uniqueUser())).expect(200);
    const collectionList = await request(server()).get('/api/knowledge/collections/default/documents?limit=1000').set(t.auth(uniqueUser())).expect(200);
    expect(ids(legacyList)).toEqual(ids(collectionList));
    expect(ids(legacyList)).toEqual(expect.arrayContaining([viaLegacy.id, viaCollection]));

    // A private collection's document is in neither listing, and the default routes do not delete it.
    const alice = t.auth(uniqueUser('alice'));
    const { id } = await createCollection(t, alice, 'Private');
    const privateDocument = await uploadTo(t, alice, id, 'private.md', text('Privatelamp').toString());
    expect(ids(await request(server()).get('/api/knowledge/documents?limit=1000').set(admin).expect(200))).not.toContain(privateDocument);
    await request(server()).delete(`/api/knowledge/documents/${privateDocument}`).set(admin).expect(404);
    await request(server()).delete(`/api/knowledge/collections/default/documents/${privateDocument}`).set(admin).expect(404);
    await request(server()).delete(`/api/knowledge/collections/${id}/documents/${viaLegacy.id}`).set(alice).expect(404);
    expect(ids(await request(server()).get(`/api/knowledge/collections/${id}/documents`).set(alice).expect(200))).toEqual([privateDocument]);

    await request(server()).delete(`/api/knowledge/collections/default/documents/${viaLegacy.id}`).set(admin).expect(200);
    await request(server()).delete(`/api/knowledge/documents/${viaCollection}`).set(admin).expect(200);
  });

  it('cannot be deleted or renamed, and stays readable by everyone', async () => {
    const admin = adminAuth(t);
    const user = t.auth(uniqueUser());
    expect((await request(server()).delete('/api/knowledge/collections/default').set(admin).expect(409)).body.code).toBe('default_collection_protected');
    expect((await request(server()).delete('/api/knowledge/collections/default').set(user).expect(403)).body.code).toBe('collection_forbidden');
    expect((await request(server()).patch('/api/knowledge/collections/default').set(admin).send({ name: 'shared' }).expect(409)).body.code).toBe('default_collection_protected');
    const described = await request(server()).patch('/api/knowledge/collections/default').set(admin).send({ name: 'default', description: 'Company handbooks' }).expect(200);
    expect(described.body).toMatchObject({ name: 'default', description: 'Company handbooks' });
    const hidden = await request(server())
      .put('/api/knowledge/collections/default/access')
      .set(admin)
      .send({ entries: [{ principal: 'group:staff', role: 'viewer' }] })
      .expect(409);
    expect(hidden.body.code).toBe('default_collection_protected');
  });

  it('may get editors besides the administrators, who then use the default routes', async () => {
    const admin = adminAuth(t);
    const editor = groupAuth(t, uniqueUser('kb'), ['kb-editors']);
    await setAccess(t, admin, 'default', [
      { principal: 'everyone', role: 'viewer' },
      { principal: 'group:kb-editors', role: 'editor' },
    ]);
    try {
      const stored = await request(server()).post('/api/knowledge/documents?wait=true').set(editor).attach('file', text('Editorlamp'), 'editor.md').expect(201);
      await request(server()).get(`/api/knowledge/jobs/${stored.body.job.id}`).set(editor).expect(200);
      await request(server()).delete(`/api/knowledge/documents/${stored.body.document.id}`).set(editor).expect(200);
      // Still no more than an editor, and told who may.
      const refused = await request(server()).patch('/api/knowledge/collections/default').set(editor).send({ description: 'mine' }).expect(403);
      expect(refused.body.message).toBe('Only administrators and its owners may change its access list, rename or delete it: your role on this collection is editor');
    } finally {
      await setAccess(t, admin, 'default', [{ principal: 'everyone', role: 'viewer' }]);
    }
  });
});

describe('An existing knowledge base migrated in place', () => {
  it('lands in the default collection: documents, chunks and jobs, found as before', async () => {
    const database = freshDatabaseUrl();
    await ensureDatabase(database);
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database, REDIS_URL: TEST_REDIS_URL, JWT_SECRET: TEST_JWT_SECRET });
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(KnowledgeCollections1764979200200));
    const old = new DataSource({ ...buildDataSourceOptions(config, 'maintenance'), migrations: before, migrationsRun: false });
    await old.initialize();
    let t: TestApp | undefined;
    try {
      await old.runMigrations();
      // A document of the schema before collections, with its leaf and the job that stored it.
      const documentId = '7a0c5e52-1111-4000-8000-000000000001';
      await old.query(
        `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, chunk_count, leaf_count, created_by)
         VALUES ($1, 'old.md', 'text/markdown', 42, repeat('a', 64), 1, 1, 'old-admin')`,
        [documentId],
      );
      await old.query(
        `INSERT INTO knowledge_chunks (document_id, level, is_leaf, ordinal, text, search_vector)
         VALUES ($1, 1, true, 0, 'The zanzibarite kettle boils in ninety seconds.', to_tsvector('simple', 'zanzibarite kettle boils ninety seconds'))`,
        [documentId],
      );
      await old.query(
        `INSERT INTO knowledge_ingest_jobs (id, filename, size_bytes, created_by, status, document_id, finished_at)
         VALUES ($1, 'old.md', 42, 'old-admin', 'completed', $1, now())`,
        [documentId],
      );
      await old.destroy();

      // The app migrates the rest at its start.
      t = await createTestApp({ DATABASE_URL: database, KNOWLEDGE_SEED_ON_START: 'false' });
      const rows = await t.dataSource.query(`
        SELECT (SELECT array_agg(DISTINCT collection_id::text) FROM knowledge_documents) AS documents,
               (SELECT array_agg(DISTINCT collection_id::text) FROM knowledge_chunks) AS chunks,
               (SELECT array_agg(DISTINCT collection_id::text) FROM knowledge_ingest_jobs) AS jobs`);
      expect(rows[0]).toEqual({ documents: [DEFAULT_COLLECTION_ID], chunks: [DEFAULT_COLLECTION_ID], jobs: [DEFAULT_COLLECTION_ID] });

      const user = t.auth(uniqueUser());
      const listed = await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(user).expect(200);
      expect(listed.body.documents).toEqual([expect.objectContaining({ id: documentId, collection_id: DEFAULT_COLLECTION_ID, filename: 'old.md' })]);
      expect((await request(t.app.getHttpServer()).get('/api/knowledge/collections/default').set(user).expect(200)).body.document_count).toBe(1);
      const job = await request(t.app.getHttpServer()).get(`/api/knowledge/jobs/${documentId}`).set(adminAuth(t)).expect(200);
      expect(job.body).toMatchObject({ collection_id: DEFAULT_COLLECTION_ID, document_id: documentId, status: 'completed' });
      const found = await request(t.app.getHttpServer()).post('/api/knowledge/search').set(user).send({ query: 'zanzibarite' }).expect(200);
      expect(found.body.chunks.map((chunk: { source: string }) => chunk.source)).toContain('old.md');

      // Reverted (a private collection's documents go with it) and applied again: the default collection's stay.
      const alice = t.auth(uniqueUser('alice'));
      const { id } = await createCollection(t, alice, 'Private');
      await uploadTo(t, alice, id, 'private.md', 'The private quokka kettle.');
      const runner = t.dataSource.createQueryRunner();
      try {
        await new ApiKeyGroups1764979200210().down(runner);
        await new KnowledgeCollections1764979200200().down(runner);
        expect(await runner.query('SELECT filename FROM knowledge_documents')).toEqual([{ filename: 'old.md' }]);
        await new KnowledgeCollections1764979200200().up(runner);
        await new ApiKeyGroups1764979200210().up(runner);
      } finally {
        await runner.release();
      }
      expect((await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(user).expect(200)).body.documents.map((d: { id: string }) => d.id)).toEqual([documentId]);
    } finally {
      if (old.isInitialized) await old.destroy();
      await t?.close();
      await dropDatabase(database);
    }
  });
});
