import { DenseRecall } from '../src/knowledge/dense/dense-recall.service.js';
import { DocumentsService } from '../src/knowledge/documents.service.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** The in-memory dense leg follows the knowledge base: leaves added are appended, leaves removed are gone. */
describe('In-memory dense index', () => {
  let t: TestApp;
  let url: string;
  const doc = (word: string, n: number) => Buffer.from(Array.from({ length: n }, (_, i) => `The ${word} manual, part ${i}. ${word}说明${i}。`).join('\n'));
  const leafIds = async (filename: string) =>
    new Set<string>(
      (
        await t.dataSource.query(
          'SELECT c.id::text AS id FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE d.filename = $1 AND c.is_leaf',
          [filename],
        )
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

  it('ranks leaves added after it loaded, and forgets removed ones', async () => {
    const dense = t.app.get(DenseRecall);
    const documents = t.app.get(DocumentsService);
    expect(dense.backend).toBe('memory');
    const first = await documents.ingest('brambleton.txt', doc('brambleton', 20), 'test');
    const bramble = await leafIds('brambleton.txt');
    expect((await dense.rank('brambleton manual', 5)).ids.every((id) => bramble.has(id))).toBe(true);

    // Appended: the next document's leaves are found without a whole reload.
    await documents.ingest('quorwick.txt', doc('quorwick', 20), 'test');
    const quorwick = await leafIds('quorwick.txt');
    const found = (await dense.rank('quorwick manual', 5)).ids;
    expect(found).toHaveLength(5);
    expect(found.every((id) => quorwick.has(id))).toBe(true);

    // Removed: the count no longer matches, so it reloads whole.
    await documents.remove(first.document.id);
    const after = (await dense.rank('brambleton manual', 50)).ids;
    expect(after.some((id) => bramble.has(id))).toBe(false);
    expect((await dense.rank('quorwick manual', 3)).ids.every((id) => quorwick.has(id))).toBe(true);
  });
});
