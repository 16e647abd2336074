/**
 * Listing knowledge documents at scale: CHUNKS chunk rows (300 000 by
 * default) under DOCUMENTS documents, written straight into the tables (the
 * ingest path is not what is measured), then the time of a page of
 * GET /api/knowledge/documents (DocumentsService.list, which reads the counts
 * stored with each document) next to the query it replaced, which counted
 * every document's leaves from its chunks.
 *
 *   npm run bench:documents          (CHUNKS=300000, DOCUMENTS=60, RUNS=20)
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { benchConfig, fmt, median, percentile, runBench, timeEach } from './support.js';

const CHUNKS = Number(process.env.CHUNKS ?? 300_000);
const DOCUMENTS = Number(process.env.DOCUMENTS ?? 60);
const RUNS = Number(process.env.RUNS ?? 20);

/** The listing before stored leaf counts: a count over each document's chunks. */
const COUNTING_LIST = `
  SELECT d.id, d.filename, d.content_type, d.size_bytes, d.page_count, d.chunk_count,
         (SELECT count(*)::int FROM knowledge_chunks c WHERE c.document_id = d.id AND c.is_leaf) AS leaf_count,
         d.created_by, d.created_at
    FROM knowledge_documents d ORDER BY d.created_at DESC, d.id`;

runBench('bench_documents', async (databaseUrl, onClose) => {
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(benchConfig(databaseUrl, { KNOWLEDGE_SEED_ON_START: 'false' })), {
    logger: ['warn', 'error'],
  });
  onClose(() => app.close());
  const dataSource = app.get(DataSource);
  const documents = app.get(DocumentsService);

  const perDocument = Math.ceil(CHUNKS / DOCUMENTS);
  const filled = performance.now();
  // Each document: one parent per three chunks, the rest leaves.
  await dataSource.query(
    `INSERT INTO knowledge_documents (id, filename, content_type, size_bytes, content_sha256, chunk_count, leaf_count, created_by, created_at)
     SELECT gen_random_uuid(), 'generated-' || n || '.txt', 'text/plain', 1000, md5(n::text) || md5((n + 1)::text), $2,
            $2 - ($2 + 2) / 3, 'bench', now() - n * interval '1 second'
       FROM generate_series(1, $1) AS n`,
    [DOCUMENTS, perDocument],
  );
  await dataSource.query(
    `INSERT INTO knowledge_chunks (document_id, level, is_leaf, ordinal, text, search_vector)
     SELECT d.id, CASE WHEN i % 3 = 0 THEN 1 ELSE 2 END, i % 3 <> 0, i, 'generated chunk ' || i, to_tsvector('simple', 'generated chunk')
       FROM knowledge_documents d, generate_series(0, $1 - 1) AS i`,
    [perDocument],
  );
  await dataSource.query('VACUUM ANALYZE knowledge_documents');
  await dataSource.query('VACUUM ANALYZE knowledge_chunks');
  const [{ chunks }] = await dataSource.query('SELECT count(*)::int AS chunks FROM knowledge_chunks');
  console.log(`${chunks} chunks under ${DOCUMENTS} documents written in ${((performance.now() - filled) / 1000).toFixed(1)} s`);

  const runs = Array.from({ length: RUNS }, (_, i) => i);
  const paged = await timeEach(runs, () => documents.list(), 2);
  const counting = await timeEach(runs, () => dataSource.query(COUNTING_LIST), 2);
  const report = (name: string, times: number[]) => console.log(`  ${name}: p50 ${fmt(median(times))}, p95 ${fmt(percentile(times, 95))}, max ${fmt(Math.max(...times))}`);
  console.log(`listing ${DOCUMENTS} documents (${RUNS} runs each, after 2 untimed):`);
  report('a page from stored counts (GET /api/knowledge/documents)', paged);
  report("counting each document's leaves (the listing before)", counting);
});
