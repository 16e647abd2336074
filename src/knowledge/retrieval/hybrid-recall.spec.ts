import type { DataSource } from 'typeorm';
import type { VersionedRead } from '../../database/database.module.js';
import { RetrievalScope } from '../collections/retrieval-scope.js';
import { PgvectorStore } from '../index/dense/pgvector.repository.js';
import type { DenseRecall } from '../index/dense/dense-recall.service.js';
import type { EmbeddingProvider } from '../index/embeddings.js';
import { FULL_TEXT_STATEMENT_TIMEOUT_MS, HybridRecall } from './hybrid-recall.service.js';

type Reply = Array<Record<string, unknown>> | Error;

/** A stand-in for TypeORM's DataSource: records every statement (and whether it ran in a transaction) and answers from `reply`. */
function fakeDatabase(reply: (sql: string, params: unknown[]) => Reply) {
  const statements: Array<{ sql: string; params: unknown[]; inTransaction: boolean }> = [];
  const runnerFor = (inTransaction: boolean) => ({
    query: async (sql: string, params: unknown[] = []) => {
      statements.push({ sql, params, inTransaction });
      const result = reply(sql, params);
      if (result instanceof Error) throw result;
      return { records: result };
    },
    release: async () => undefined,
  });
  const transactionRunner = runnerFor(true);
  const manager = {
    queryRunner: transactionRunner,
    query: async (sql: string, params?: unknown[]) => (await transactionRunner.query(sql, params)).records,
  };
  const dataSource = {
    connection: { createQueryRunner: () => runnerFor(false) },
    transaction: async <T>(work: (m: typeof manager) => Promise<T>) => work(manager),
  };
  return { dataSource: dataSource as unknown as DataSource, statements };
}

const everything = RetrievalScope.unrestricted();
const denseScopes: RetrievalScope[] = [];
const dense = {
  rank: async (_query: string, _limit: number, scope: RetrievalScope) => {
    denseScopes.push(scope);
    return { ids: ['7', '8'], backend: 'memory' as const };
  },
} as unknown as DenseRecall;
const embeddings = { name: 'fake' } as unknown as EmbeddingProvider;
const COLLECTION = '6f1c1d8e-0000-4000-8000-00000000abcd';
const details = (ids: unknown) => (ids as string[]).map((id) => ({ id, collection_id: COLLECTION, text: `chunk ${id}`, page: null, parent_id: null, level: 2, source: 'doc.md' }));

const timeoutError = () => Object.assign(new Error('canceling statement due to statement timeout'), { driverError: { code: '57014' } });

describe('HybridRecall: what a query can cost', () => {
  it('ranks full text in a transaction with a statement timeout, with at most 32 terms', async () => {
    const { dataSource, statements } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? [] : /knowledge_documents/.test(sql) ? details(params[0]) : []));
    const recall = new HybridRecall(dataSource, embeddings, dense);
    const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}z`).join(' ');
    const result = await recall.recall(`reset the router ${words}`, 8, everything, { translate: false });
    expect(result).toMatchObject({ fullTextTerms: 32, fullTextTermsDropped: 402 - 32, fullTextTranslatedTerms: 0, fullTextError: undefined });
    const fullText = statements.filter((s) => /to_tsquery/.test(s.sql));
    expect(fullText).toHaveLength(2); // every term, then any term
    for (const statement of fullText) {
      expect(statement.inTransaction).toBe(true);
      expect(String(statement.params[0]).split(/ [&|] /)).toHaveLength(32);
    }
    expect(statements[0]).toEqual({ sql: `SET LOCAL statement_timeout = ${FULL_TEXT_STATEMENT_TIMEOUT_MS}`, params: [], inTransaction: true });
    expect(result.candidates.map((c) => c.chunk_id)).toEqual(['7', '8']);
  });

  it('answers from the dense ranking alone, saying why, when the full-text ranking hits the timeout', async () => {
    const { dataSource } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? timeoutError() : /knowledge_documents/.test(sql) ? details(params[0]) : []));
    const recall = new HybridRecall(dataSource, embeddings, dense);
    const result = await recall.recall('reset the router', 8, everything);
    expect(result.fullTextError).toBe(`full-text search cancelled after ${FULL_TEXT_STATEMENT_TIMEOUT_MS} ms (statement timeout)`);
    expect(result.candidates.map((c) => [c.chunk_id, c.rrf_rank])).toEqual([
      ['7', 1],
      ['8', 2],
    ]);
    expect(result.fullTextTerms).toBe(2);
  });

  it('lets other database errors through (they are not a slow query)', async () => {
    const broken = Object.assign(new Error('relation does not exist'), { driverError: { code: '42P01' } });
    const { dataSource } = fakeDatabase((sql) => (/to_tsquery/.test(sql) ? broken : []));
    await expect(new HybridRecall(dataSource, embeddings, dense).recall('reset the router', 8, everything)).rejects.toBe(broken);
  });

  it('does not query the database for a query without terms', async () => {
    const { dataSource, statements } = fakeDatabase(() => []);
    expect(await new HybridRecall(dataSource, embeddings, dense).fullTextRecall('？ the a', 8, everything)).toEqual({ ids: [], terms: 0, dropped: 0, translatedTerms: 0 });
    expect(statements).toHaveLength(0);
  });

  it("also ranks the question's words in the other language, in the same transaction, behind the question's own ranking", async () => {
    const { dataSource, statements } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? (/加湿/.test(String(params[0])) ? [{ id: '2' }, { id: '3' }] : [{ id: '1' }]) : []));
    const recall = new HybridRecall(dataSource, embeddings, dense);
    const ranking = await recall.fullTextRecall('How often should I clean the humidifier tank?', 8, everything);
    expect(ranking.translatedTerms).toBeGreaterThan(0);
    expect(ranking.translatedTerms).toBeLessThanOrEqual(32);
    expect(ranking.ids).toEqual(['1', '2', '3']);
    const fullText = statements.filter((s) => /to_tsquery/.test(s.sql));
    // The question's words: every one, then any; their translations: every word through one of its translations, then any.
    expect(fullText).toHaveLength(4);
    for (const statement of fullText) expect(statement.inTransaction).toBe(true);
    expect(String(fullText[2].params[0])).toMatch(/\('加湿' & '湿器'\)/);
    expect(String(fullText[2].params[0])).toContain(' & ');

    // A query that is itself a translation is not translated back.
    statements.length = 0;
    expect((await recall.fullTextRecall('雾岛加湿器的水箱', 8, everything, undefined, false)).translatedTerms).toBe(0);
    expect(statements.filter((s) => /to_tsquery/.test(s.sql)).every((s) => /[\u3400-\u9fff]/.test(String(s.params[0])))).toBe(true);
  });
});

describe('HybridRecall: the ranking in the other language is an extra', () => {
  const question = 'How often should I clean the humidifier tank?';

  it("keeps the question's own ranking when the translated one hits its statement timeout", async () => {
    const { dataSource } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? (/[\u3400-\u9fff]/.test(String(params[0])) ? timeoutError() : [{ id: '1' }, { id: '4' }]) : []));
    const ranking = await new HybridRecall(dataSource, embeddings, dense).fullTextRecall(question, 8, everything);
    expect(ranking.ids).toEqual(['1', '4']);
    expect(ranking.error).toBeUndefined();
    expect(ranking.translatedTerms).toBeGreaterThan(0);
  });

  it('keeps room for the documents only the translation found, however long the own ranking', async () => {
    const own = Array.from({ length: 20 }, (_, i) => ({ id: `own${i}` }));
    const { dataSource } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? (/[\u3400-\u9fff]/.test(String(params[0])) ? [{ id: 'zh1' }, { id: 'own0' }] : own) : []));
    const { ids } = await new HybridRecall(dataSource, embeddings, dense).fullTextRecall(question, 20, everything);
    expect(ids).toHaveLength(20);
    expect(ids.slice(0, 15)).toEqual(own.slice(0, 15).map(({ id }) => id));
    expect(ids).toContain('zh1');
  });
});

describe('HybridRecall: the scope is a condition of every ranking and read', () => {
  it("filters the full-text match, hands the scope to the dense leg and reads the chunks' rows under it", async () => {
    const scope = RetrievalScope.of([COLLECTION]);
    const { dataSource, statements } = fakeDatabase((sql, params) => (/to_tsquery/.test(sql) ? [{ id: '7' }] : /knowledge_documents/.test(sql) ? details(params[0]) : []));
    denseScopes.length = 0;
    const result = await new HybridRecall(dataSource, embeddings, dense).recall('reset the router', 8, scope);
    const fullText = statements.filter((s) => /to_tsquery/.test(s.sql));
    expect(fullText.length).toBeGreaterThan(0);
    for (const statement of fullText) {
      // Inside the capped match itself, before its LIMIT: the cap counts readable leaves only.
      expect(statement.sql).toMatch(/WHERE is_leaf AND search_vector @@ q AND collection_id = ANY\(\$3::uuid\[\]\)\s+LIMIT 1000/);
      expect(statement.params[2]).toEqual([COLLECTION]);
    }
    expect(denseScopes).toEqual([scope]);
    const read = statements.find((s) => /knowledge_documents/.test(s.sql))!;
    expect(read.sql).toMatch(/c\.collection_id = ANY\(\$2::uuid\[\]\)/);
    expect(read.params[1]).toEqual([COLLECTION]);
    expect(result.candidates.map((c) => [c.chunk_id, c.collection_id])).toEqual([
      ['7', COLLECTION],
      ['8', COLLECTION],
    ]);
  });

  it('leaves the statements unfiltered for every collection, and queries nothing for an empty scope', async () => {
    const every = fakeDatabase((sql, params) => (/knowledge_documents/.test(sql) ? details(params[0]) : []));
    await new HybridRecall(every.dataSource, embeddings, dense).recall('reset the router', 8, everything);
    expect(every.statements.filter((s) => /collection_id = ANY/.test(s.sql))).toEqual([]);

    const none = fakeDatabase(() => []);
    const nothing = { rank: async () => ({ ids: [], backend: 'memory' as const }) } as unknown as DenseRecall;
    const result = await new HybridRecall(none.dataSource, embeddings, nothing).recall('reset the router', 8, RetrievalScope.of([]));
    expect(result.candidates).toEqual([]);
    expect(none.statements).toEqual([]);
  });
});

describe('HybridRecall on a read replica', () => {
  const fullTextStatements = (statements: Array<{ sql: string }>) => statements.filter((s) => /to_tsquery/.test(s.sql));

  it('stops the full-text ranking after reading the version when the replica is behind the one asked for (its ranking would be thrown away)', async () => {
    const primary = fakeDatabase(() => []);
    const replica = fakeDatabase((sql) => (/knowledge_index_state/.test(sql) ? [{ version: '3' }] : []));
    const recall = new HybridRecall(primary.dataSource, embeddings, dense);
    const versions: Array<string | null> = [];
    const readAtLeast =
      (atLeast: string): VersionedRead =>
      async (read) => {
        const { version, value } = await read(replica.dataSource, atLeast);
        versions.push(version);
        return value;
      };

    expect((await recall.fullTextRecall('reset the router', 8, everything, readAtLeast('9'))).ids).toEqual([]);
    expect(fullTextStatements(replica.statements)).toEqual([]);
    expect(versions).toEqual(['3']);

    await recall.fullTextRecall('reset the router', 8, everything, readAtLeast('3'), false);
    expect(fullTextStatements(replica.statements)).toHaveLength(2);
    expect(primary.statements).toEqual([]);
  });

  it("stops pgvector's ranking likewise, after its first statement", async () => {
    const replica = fakeDatabase((sql) => (/knowledge_index_state/.test(sql) ? [{ epoch: 0, version: '3' }] : []));
    const pgvector = new PgvectorStore(replica.dataSource, 4, 40);
    const query = Float32Array.from([0.5, 0.5, 0.5, 0.5]);
    expect(await pgvector.rankOn(replica.dataSource, query, 8, everything, '9')).toEqual({ version: '3', value: [] });
    expect(replica.statements).toHaveLength(1);
    await pgvector.rankOn(replica.dataSource, query, 8, everything, '3');
    expect(replica.statements.length).toBeGreaterThan(2);
  });

  it("answers the full-text ranking's own timeout on the replica there (empty, saying why), not as a failed read the primary would run again", async () => {
    const replica = fakeDatabase((sql) => (/knowledge_index_state/.test(sql) ? [{ version: '3' }] : /to_tsquery/.test(sql) ? timeoutError() : []));
    const primary = fakeDatabase(() => []);
    let answered: unknown;
    const reads: VersionedRead = async (read) => {
      const result = await read(replica.dataSource, '3');
      answered = result;
      return result.value;
    };
    const result = await new HybridRecall(primary.dataSource, embeddings, dense).fullTextRecall('reset the router', 8, everything, reads, false);
    expect(answered).toEqual({ version: '3', value: null });
    expect(result).toEqual({
      ids: [],
      terms: 2,
      dropped: 0,
      translatedTerms: 0,
      error: `full-text search cancelled after ${FULL_TEXT_STATEMENT_TIMEOUT_MS} ms (statement timeout)`,
    });
    expect(primary.statements).toEqual([]);
  });
});
