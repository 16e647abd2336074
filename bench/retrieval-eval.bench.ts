/**
 * Retrieval quality on the sample corpus: recall@5 and MRR over a labelled
 * question set (bench/data/labelled-questions.json; a hit is a chunk of the
 * labelled document containing the labelled phrase), for full-text only,
 * dense only, hybrid (RRF) and hybrid + rerank, side by side.
 *
 *   npm run bench:eval
 */
import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { sqlRows } from '../src/database/sql.js';
import { DenseRecall } from '../src/knowledge/dense/dense-recall.service.js';
import { MemoryDenseIndex } from '../src/knowledge/dense/memory-dense-index.js';
import { EmbeddingProvider } from '../src/knowledge/embeddings.js';
import { HybridRecall, reciprocalRankFusion } from '../src/knowledge/hybrid-recall.service.js';
import { RetrievalService } from '../src/knowledge/retrieval.service.js';
import { benchConfig, runBench } from './support.js';

interface Labelled {
  q: string;
  source: string;
  contains: string;
}

const K = 5;

const CHUNK_SIZES = process.env.KNOWLEDGE_CHUNK_SIZES ?? '300,100';

runBench('bench_eval', async (databaseUrl, onClose) => {
  // Small chunks make the ranking the hard part: more candidates per question than top 5.
  const config = benchConfig(databaseUrl, { KNOWLEDGE_CHUNK_SIZES: CHUNK_SIZES, KNOWLEDGE_CHUNK_OVERLAP: '20' });
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['warn', 'error'] });
  onClose(() => app.close());
  const questions = JSON.parse(await readFile('bench/data/labelled-questions.json', 'utf8')) as Labelled[];
  const dataSource = app.get(DataSource);
  const recall = app.get(HybridRecall);
  const pipeline = app.get(RetrievalService);
  const embeddings = app.get(EmbeddingProvider);
  const memoryIndex = new MemoryDenseIndex(dataSource, embeddings.dimensions);
  const denseBackend = app.get(DenseRecall).backend;

  const chunks = new Map(
    (
      await sqlRows<{ id: string; text: string; source: string }>(
        dataSource,
        `SELECT c.id::text AS id, c.text, d.filename AS source FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id`,
      )
    ).map((row) => [row.id, row]),
  );
  const relevant = (label: Labelled, chunk: { source: string; text: string } | undefined) =>
    !!chunk && chunk.source === label.source && chunk.text.includes(label.contains);

  const methods: Record<string, (q: string) => Promise<Array<{ source: string; text: string } | undefined>>> = {
    'full-text only': async (q) => (await recall.fullTextRanking(q, K)).map((id) => chunks.get(id)),
    [`dense only (${denseBackend})`]: async (q) => (await recall.denseRanking(q, K)).map((id) => chunks.get(id)),
    ...(denseBackend === 'memory'
      ? {}
      : {
          'dense only (memory)': async (q: string) =>
            (await memoryIndex.rank(Float32Array.from((await embeddings.embed([q]))[0]), K)).map((id) => chunks.get(id)),
        }),
    'hybrid (RRF)': async (q) =>
      reciprocalRankFusion([await recall.fullTextRanking(q, 20), await recall.denseRanking(q, 20)])
        .slice(0, K)
        .map((f) => chunks.get(f.id)),
    'hybrid + auto-merge + rerank': async (q) => (await pipeline.search(q, K)).hits.map((h) => ({ source: h.source, text: h.text })),
  };

  const leaves = [...chunks.values()].length;
  console.log(
    `${questions.length} labelled questions (${questions.filter((q) => /[\u3400-\u9fff]/.test(q.q)).length} Chinese), ${leaves} chunks (sizes ${CHUNK_SIZES}), local embeddings and rerank`,
  );
  console.log(`${'method'.padEnd(30)} recall@${K}     MRR`);
  for (const [name, rank] of Object.entries(methods)) {
    let found = 0;
    let reciprocal = 0;
    for (const label of questions) {
      const ranked = await rank(label.q);
      const at = ranked.findIndex((chunk) => relevant(label, chunk));
      if (at >= 0) {
        found += 1;
        reciprocal += 1 / (at + 1);
      }
    }
    console.log(`${name.padEnd(30)} ${(found / questions.length).toFixed(3).padStart(8)}  ${(reciprocal / questions.length).toFixed(3).padStart(6)}`);
  }
});
