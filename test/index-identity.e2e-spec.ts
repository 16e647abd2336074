import request from 'supertest';
import { TOKENIZER_VERSION } from '../src/common/text.js';
import { loadConfig } from '../src/config/app-config.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { createEmbeddingProvider } from '../src/knowledge/index/embedding-registry.js';
import { reindexKnowledge } from '../src/knowledge/index/reindex.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** Index identity: leaves record the embedding space they were indexed in, and instances refuse to mix spaces. */
describe('Index identity', () => {
  const databases: string[] = [];
  const ownDatabase = async () => {
    const url = freshDatabaseUrl();
    await ensureDatabase(url);
    databases.push(url);
    return url;
  };
  const start = (database: string, env: Record<string, string> = {}) => createTestApp({ DATABASE_URL: database, KNOWLEDGE_SEED_ON_START: 'false', ...env });
  const upload = (t: TestApp, name: string, text: string) =>
    request(t.app.getHttpServer()).post('/api/knowledge/documents?wait=true').set(adminAuth(t)).attach('file', Buffer.from(text, 'utf8'), name);

  afterAll(async () => {
    for (const url of databases) await dropDatabase(url);
  });

  it("records each leaf's space, and refuses to start with another model or size on the same index", async () => {
    const database = await ownDatabase();
    const first = await start(database);
    let id: string;
    try {
      const res = await upload(first, 'orchid.md', '# Orchid\nThe Orchid lamp dims in five steps. 兰花台灯有五档亮度。').expect(201);
      id = res.body.document.id;
      const spaces = await first.dataSource.query(
        `SELECT DISTINCT s.provider, s.model, s.dimensions, s.tokenizer_version
           FROM knowledge_chunks c JOIN knowledge_embedding_spaces s ON s.id = c.space_id WHERE c.document_id = $1 AND c.is_leaf`,
        [id],
      );
      expect(spaces).toEqual([{ provider: 'local', model: 'local-hash-1', dimensions: 256, tokenizer_version: TOKENIZER_VERSION }]);
      const [{ unrecorded }] = await first.dataSource.query('SELECT count(*)::int AS unrecorded FROM knowledge_chunks WHERE document_id = $1 AND is_leaf AND space_id IS NULL', [
        id,
      ]);
      expect(unrecorded).toBe(0);
    } finally {
      await first.close();
    }

    // Another size, or another provider or model at the same size: not comparable, so no start.
    await expect(start(database, { EMBEDDING_DIMENSIONS: '64' })).rejects.toThrow(
      /indexed with local\/local-hash-1, 256 dimensions.*configured for local\/local-hash-1, 64 dimensions/s,
    );
    await expect(
      start(database, { EMBEDDING_PROVIDER: 'openai', EMBEDDING_MODEL: 'text-embedding-3-small', EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1', EMBEDDING_API_KEY: 'x' }),
    ).rejects.toThrow(/configured for openai\/text-embedding-3-small, 256 dimensions/);
    // The same settings start again.
    const again = await start(database);
    await again.close();
  });

  it('refuses a model change at the same size, even before any leaf is stored', async () => {
    const database = await ownDatabase();
    const endpoint = { EMBEDDING_PROVIDER: 'openai', EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1', EMBEDDING_API_KEY: 'x', EMBEDDING_DIMENSIONS: '16' };
    const first = await start(database, { ...endpoint, EMBEDDING_MODEL: 'model-a' });
    await first.close();
    await expect(start(database, { ...endpoint, EMBEDDING_MODEL: 'model-b' })).rejects.toThrow(/indexed with openai\/model-a, 16 dimensions/);
  });

  it("fails an ingest whose instance's space is no longer the knowledge base's, and claims leaves stored before leaves had one", async () => {
    const database = await ownDatabase();
    const t = await start(database);
    try {
      await upload(t, 'fern.md', '# Fern\nThe Fern kettle boils a litre in three minutes.').expect(201);
      // Leaves as an earlier version stored them: no space.
      await t.dataSource.query('UPDATE knowledge_chunks SET space_id = NULL WHERE is_leaf');
      // The knowledge base moves to another space while this instance runs (another instance re-indexed it).
      const [{ id: other }] = await t.dataSource.query(
        `INSERT INTO knowledge_embedding_spaces (provider, model, dimensions, tokenizer_version) VALUES ('openai', 'other', 256, $1) RETURNING id`,
        [TOKENIZER_VERSION],
      );
      await t.dataSource.query('UPDATE knowledge_index_state SET space_id = $1', [other]);
      const refused = await upload(t, 'moss.md', '# Moss\nThe Moss speaker plays for ten hours.');
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'index_space_mismatch' });
      expect(refused.body.message).toMatch(/indexed with openai\/other, 256 dimensions/);
      const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM knowledge_documents WHERE filename = 'moss.md'`);
      expect(n).toBe(0);
      await t.dataSource.query('UPDATE knowledge_index_state SET space_id = NULL');
    } finally {
      await t.close();
    }
    const restarted = await start(database);
    try {
      const [{ unrecorded }] = await restarted.dataSource.query('SELECT count(*)::int AS unrecorded FROM knowledge_chunks WHERE is_leaf AND space_id IS NULL');
      expect(unrecorded).toBe(0);
    } finally {
      await restarted.close();
    }
  });

  it('knowledge:reindex moves the knowledge base to the new settings: they start and find the document, the old ones do not start', async () => {
    const database = await ownDatabase();
    const old = await start(database);
    try {
      await upload(old, 'heron.md', '# Heron\nThe Heron bicycle folds in twelve seconds. 苍鹭自行车十二秒折叠。').expect(201);
    } finally {
      await old.close();
    }
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database, EMBEDDING_DIMENSIONS: '64' });
    const embeddings = createEmbeddingProvider(config);
    const progress: number[] = [];
    const probe = await start(database); // its data source, for the re-index (the old settings still start here)
    let reindexed: number;
    try {
      const result = await reindexKnowledge(
        probe.dataSource,
        embeddings,
        { provider: 'local', model: embeddings.model, dimensions: 64, tokenizer_version: TOKENIZER_VERSION },
        (done) => progress.push(done),
      );
      reindexed = result.reindexed;
    } finally {
      await probe.close();
    }
    expect(reindexed).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(reindexed);
    await expect(start(database)).rejects.toThrow(/indexed with local\/local-hash-1, 64 dimensions/);
    const moved = await start(database, { EMBEDDING_DIMENSIONS: '64' });
    try {
      const [{ wrong }] = await moved.dataSource.query('SELECT count(*)::int AS wrong FROM knowledge_chunks WHERE is_leaf AND octet_length(embedding) <> 64 * 4');
      expect(wrong).toBe(0);
      const found = await request(moved.app.getHttpServer()).post('/api/knowledge/search').set(moved.auth(uniqueUser())).send({ query: 'Heron bicycle folds' }).expect(200);
      expect(found.body.chunks[0].source).toBe('heron.md');
      expect(found.body.rag_trace.dense_error ?? null).toBeNull();
    } finally {
      await moved.close();
    }
  });
});
