import { randomUUID } from 'node:crypto';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { RetrievalScope } from '../src/knowledge/collections/retrieval-scope.js';
import { ChunksRepository } from '../src/knowledge/index/chunks.repository.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { PgvectorStore } from '../src/knowledge/index/dense/pgvector.repository.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { IndexIdentity } from '../src/knowledge/index/index-identity.js';
import { searchDocumentText } from '../src/knowledge/index/search-text.js';
import { HybridRecall } from '../src/knowledge/retrieval/hybrid-recall.service.js';
import { EVERY_COLLECTION } from './support/collections.js';
import { describeWithPgvector } from './support/pgvector.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

const TOPICS = 100;
const HIDDEN_PER_TOPIC = 100;
const K = 10;

/** Made-up words, two per topic and one more for the readable leaf's dial, all different (a seeded generator). */
const WORDS = (() => {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tor', 'vex', 'sun', 'dal', 'pri', 'zo', 'quin', 'bel', 'ash', 'nor', 'fi', 'gus'];
  let seed = 23;
  const next = () => (seed = (seed * 16807) % 2147483647);
  const words = new Set<string>();
  while (words.size < TOPICS * 3) words.add(Array.from({ length: 3 }, () => syllables[next() % syllables.length]).join(''));
  return [...words];
})();
const topicWords = (i: number) => `${WORDS[3 * i]} ${WORDS[3 * i + 1]}`;
const question = (i: number) => `How is the ${topicWords(i)} valve set?`;
/** The one leaf of the readable collection that answers question(i). */
const readableText = (i: number) => `Readable note ${i}: the ${topicWords(i)} valve is set by turning the ${WORDS[3 * i + 2]} dial.`;
/** Leaves of the unreadable collection that look more like question(i) than its answer does: they crowd a top k. */
const hiddenText = (i: number, j: number) => `How is the ${topicWords(i)} valve set? Hidden variant ${j}.`;

/**
 * Writes each collection's leaves through the chunks repository (as ingest writes them, without 10 000 ingest jobs):
 * one document per collection, search text and embeddings as ingest makes them. With the HNSW index, the leaves go
 * into the next dense epoch and the index is built over all of them once, as after a bulk load.
 */
async function seed(app: TestApp, collections: Array<{ id: string; texts: string[] }>): Promise<void> {
  const dataSource = app.dataSource;
  const dense = app.app.get(DenseRecall);
  const embeddings = app.app.get(EmbeddingProvider);
  const chunks = new ChunksRepository(dataSource);
  const [{ epoch }] = await dataSource.query('SELECT dense_epoch AS epoch FROM knowledge_index_state WHERE id = 1');
  const denseEpoch = Number(epoch) + (dense.bulkLoadsOutsideIndex ? 1 : 0);
  const target = { spaceId: app.app.get(IndexIdentity).spaceId, denseEpoch, withVectorColumn: dense.writesVectorColumn };
  for (const { id, texts } of collections) {
    await dataSource.query(`INSERT INTO knowledge_collections (id, name, owner) VALUES ($1, $2, 'recall-test')`, [id, `collection ${id.slice(0, 8)}`]);
    await dataSource.transaction(async (manager) => {
      const [document] = await manager.query(
        `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, page_count, chunk_count, created_by, collection_id)
         VALUES (gen_random_uuid(), $1::varchar, 'text/plain', 1, encode(sha256(convert_to($1::varchar, 'UTF8')), 'hex'), NULL, $2, 'recall-test', $3) RETURNING id`,
        [`leaves-${id}.txt`, texts.length, id],
      );
      for (let start = 0; start < texts.length; start += 500) {
        const batch = texts.slice(start, start + 500);
        const vectors = await embeddings.embed(batch);
        const rows = batch.map((text, i) => ({
          parentId: null,
          level: 1,
          isLeaf: true,
          ordinal: start + i,
          page: null,
          location: null,
          text,
          searchText: searchDocumentText(text),
          embedding: Float32Array.from(vectors[i]),
        }));
        await chunks.insert(manager, String(document.id), rows, { ...target, collectionId: id });
      }
    });
  }
  if (dense.bulkLoadsOutsideIndex) await dense.finishBulkLoad(denseEpoch);
  await dataSource.query('UPDATE knowledge_index_state SET version = version + 1 WHERE id = 1');
}

interface Ranked {
  /** Per question, the texts ranked, best first. */
  dense: string[][];
  hybrid: string[][];
}

/** recall@K: the share of questions whose readable answer is among the texts ranked. */
const recallAtK = (rankings: string[][]) => rankings.filter((texts, i) => texts.slice(0, K).includes(readableText(i))).length / rankings.length;

/** Both backends: the same readable collection alone in one database, and beside 10 000 unreadable leaves in another. */
function recallComparison(backend: 'memory' | 'pgvector') {
  const readable = randomUUID();
  const hidden = randomUUID();
  const urls = { both: freshDatabaseUrl(), alone: freshDatabaseUrl() };
  const apps: TestApp[] = [];
  let both: TestApp;
  let alone: TestApp;
  const readableTexts = Array.from({ length: TOPICS }, (_, i) => readableText(i));

  const instance = async (url: string) => {
    await ensureDatabase(url);
    const app = await createTestApp({ DATABASE_URL: url, RAG_DENSE_BACKEND: backend, KNOWLEDGE_SEED_ON_START: 'false' });
    apps.push(app);
    return app;
  };
  /** The texts of ids (the row ids differ between the databases; the texts do not). */
  const textsOf = async (app: TestApp, ids: string[]): Promise<string[]> => {
    const rows: Array<{ id: string; text: string }> = await app.dataSource.query('SELECT id::text AS id, text FROM knowledge_chunks WHERE id = ANY($1::bigint[])', [ids]);
    const text = new Map(rows.map((row) => [row.id, row.text]));
    return ids.map((id) => text.get(id)!);
  };
  const rank = async (app: TestApp, scope: RetrievalScope): Promise<Ranked> => {
    const ranked: Ranked = { dense: [], hybrid: [] };
    for (let i = 0; i < TOPICS; i += 1) {
      ranked.dense.push(await textsOf(app, (await app.app.get(DenseRecall).rank(question(i), K, scope)).ids));
      ranked.hybrid.push((await app.app.get(HybridRecall).recall(question(i), K, scope)).candidates.map((candidate) => candidate.text));
    }
    return ranked;
  };

  beforeAll(async () => {
    both = await instance(urls.both);
    alone = await instance(urls.alone);
    expect(both.app.get(DenseRecall).backend).toBe(backend === 'memory' ? 'memory' : 'pgvector-hnsw');
    const hiddenTexts = Array.from({ length: TOPICS * HIDDEN_PER_TOPIC }, (_, n) => hiddenText(n % TOPICS, Math.floor(n / TOPICS)));
    await seed(both, [
      { id: hidden, texts: hiddenTexts },
      { id: readable, texts: readableTexts },
    ]);
    await seed(alone, [{ id: readable, texts: readableTexts }]);
  }, 240_000);
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    for (const url of Object.values(urls)) await dropDatabase(url);
  });

  it(`gives the readable collection among ${TOPICS * HIDDEN_PER_TOPIC} unreadable leaves the recall@${K} it has alone, on each leg`, async () => {
    const scope = RetrievalScope.of([readable]);
    const beside = await rank(both, scope);
    const byItself = await rank(alone, scope);
    for (const leg of ['dense', 'hybrid'] as const) {
      expect([leg, recallAtK(beside[leg])]).toEqual([leg, recallAtK(byItself[leg])]);
      expect(recallAtK(byItself[leg])).toBeGreaterThanOrEqual(0.9);
      for (const texts of beside[leg]) expect(texts.every((text) => text.startsWith('Readable note'))).toBe(true);
    }
    // Not only the measure: the dense leg ranks the same leaves in the same order. (Fusion breaks ties of equal
    // scores by row id, which differs between the two databases, so the hybrid order may differ within a tie.)
    expect(beside.dense).toEqual(byItself.dense);
  });

  it('would lose the readable answers by filtering after recall: the unreadable leaves fill the top k', async () => {
    const unfiltered = await rank(both, EVERY_COLLECTION);
    for (const leg of ['dense', 'hybrid'] as const) {
      const filteredAfter = unfiltered[leg].map((texts) => texts.filter((text) => text.startsWith('Readable note')));
      expect([leg, recallAtK(filteredAfter)]).toEqual([leg, expect.any(Number)]);
      expect(recallAtK(filteredAfter)).toBeLessThanOrEqual(0.1);
    }
  });

  if (backend === 'pgvector') {
    it('ranks a scope too large for the exact path by HNSW (iterative scan; exactly when it comes back short), never starved by the unreadable leaves', async () => {
      const embeddings = both.app.get(EmbeddingProvider);
      const spaceId = both.app.get(IndexIdentity).spaceId;
      // The same index, with the exact path only below 50 leaves: the 100 readable ones go through HNSW.
      const store = new PgvectorStore(both.dataSource, embeddings.dimensions, 40, { spaceId: () => spaceId, exactScopeLeaves: 50 });
      const scope = RetrievalScope.of([readable]);
      let found = 0;
      for (let i = 0; i < TOPICS; i += 1) {
        const ids = await store.rank(Float32Array.from((await embeddings.embed([question(i)]))[0]), K, scope);
        const texts = await textsOf(both, ids);
        expect(texts).toHaveLength(K);
        expect(texts.every((text) => text.startsWith('Readable note'))).toBe(true);
        if (texts.includes(readableText(i))) found += 1;
      }
      // The exact path finds (nearly) all; HNSW over hashed embeddings is approximate, but far from starved.
      expect(found / TOPICS).toBeGreaterThanOrEqual(0.5);
    });
  }
}

describe('Recall inside the access filter, in-memory dense index', () => recallComparison('memory'));
describeWithPgvector('Recall inside the access filter, pgvector HNSW', () => recallComparison('pgvector'));
