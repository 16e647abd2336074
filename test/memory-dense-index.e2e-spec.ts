import { DataSource } from 'typeorm';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { MemoryDenseIndex } from '../src/knowledge/index/dense/memory-dense-index.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';
import { EVERY_COLLECTION } from './support/collections.js';

/** The in-memory dense leg follows the knowledge base: leaves added are appended, leaves removed are gone. */
describe('In-memory dense index', () => {
  let t: TestApp;
  let url: string;
  const doc = (word: string, n: number) => Buffer.from(Array.from({ length: n }, (_, i) => `The ${word} manual, part ${i}. ${word}说明${i}。`).join('\n'));
  const leafIds = async (filename: string) =>
    new Set<string>(
      (
        await t.dataSource.query('SELECT c.id::text AS id FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = $1 AND c.is_leaf', [
          filename,
        ])
      ).map((row: { id: string }) => row.id),
    );

  beforeAll(async () => {
    url = freshDatabaseUrl();
    await ensureDatabase(url);
    t = await createTestApp({ DATABASE_URL: url, RAG_DENSE_BACKEND: 'memory', KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '400,120' });
  });
  afterAll(async () => {
    await t.close();
    await dropDatabase(url);
  });

  it('loads its rows a bounded batch per statement (a million leaves in one statement passed the statement timeout)', async () => {
    await t.app.get(DocumentsService).ingest('larkspur.txt', doc('larkspur', 30), 'test');
    let largest = 0;
    let statements = 0;
    // Every statement of the index goes through a query runner of the app's data source: count what each returns.
    const createQueryRunner = t.dataSource.createQueryRunner;
    t.dataSource.createQueryRunner = function (this: DataSource, ...args: Parameters<typeof createQueryRunner>) {
      const runner = createQueryRunner.apply(this, args);
      const run = runner.query;
      runner.query = async function (this: typeof runner, ...queryArgs: unknown[]) {
        const result = await (run as (...a: unknown[]) => Promise<{ records?: unknown[] }>).apply(this, queryArgs);
        if (/SELECT id::text, collection_id::text, CASE WHEN .* THEN embedding END AS embedding FROM knowledge_chunks/s.test(String(queryArgs[0]))) {
          statements += 1;
          largest = Math.max(largest, result.records?.length ?? 0);
        }
        return result;
      } as typeof run;
      return runner;
    };
    const [{ leaves }] = await t.dataSource.query('SELECT count(*)::int AS leaves FROM knowledge_chunks WHERE is_leaf');
    const [query] = await t.app.get(EmbeddingProvider).embed(['larkspur manual']);
    const vector = Float32Array.from(query);
    const whole = await new MemoryDenseIndex(t.dataSource, 256, undefined, 1_000_000).rank(vector, 10);
    statements = 0;
    largest = 0;
    let batched: string[];
    try {
      batched = await new MemoryDenseIndex(t.dataSource, 256, undefined, 7).rank(vector, 10);
    } finally {
      t.dataSource.createQueryRunner = createQueryRunner;
    }
    expect(batched).toEqual(whole);
    expect(leaves).toBeGreaterThan(7);
    expect(largest).toBeLessThanOrEqual(7);
    expect(statements).toBeGreaterThanOrEqual(Math.ceil(leaves / 7));
  });

  it('ranks leaves added after it loaded, and forgets removed ones', async () => {
    const dense = t.app.get(DenseRecall);
    const documents = t.app.get(DocumentsService);
    expect(dense.backend).toBe('memory');
    const first = await documents.ingest('brambleton.txt', doc('brambleton', 20), 'test');
    const bramble = await leafIds('brambleton.txt');
    expect((await dense.rank('brambleton manual', 5, EVERY_COLLECTION)).ids.every((id) => bramble.has(id))).toBe(true);

    // Appended: the next document's leaves are found without a whole reload.
    await documents.ingest('quorwick.txt', doc('quorwick', 20), 'test');
    const quorwick = await leafIds('quorwick.txt');
    const found = (await dense.rank('quorwick manual', 5, EVERY_COLLECTION)).ids;
    expect(found).toHaveLength(5);
    expect(found.every((id) => quorwick.has(id))).toBe(true);

    // Removed: the count no longer matches, so it reloads whole.
    await documents.remove(first.document.id);
    const after = (await dense.rank('brambleton manual', 50, EVERY_COLLECTION)).ids;
    expect(after.some((id) => bramble.has(id))).toBe(false);
    expect((await dense.rank('quorwick manual', 3, EVERY_COLLECTION)).ids.every((id) => quorwick.has(id))).toBe(true);
  });
});
