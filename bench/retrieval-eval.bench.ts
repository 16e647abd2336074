/**
 * Retrieval quality on the sample corpus: recall@5 and MRR over a labelled
 * question set (bench/data/labelled-questions.json; a hit is a chunk of the
 * labelled document containing the labelled phrase), for full-text only,
 * dense only, hybrid (RRF) and hybrid + rerank, side by side.
 *
 * Then the same methods on the shared rag-eval benchmark (RAG_EVAL_DIR, by
 * default ../shared/benchmarks/rag-eval beside the repository; skipped when
 * absent), ingested into a knowledge base of its own: recall@5 and MRR over
 * distinct sources, overall, per lang and per type (bench/rag-eval-dataset.ts).
 *
 *   npm run bench:eval
 */
import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { sqlRows } from '../src/database/sql.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { MemoryDenseIndex } from '../src/knowledge/index/dense/memory-dense-index.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { HybridRecall, reciprocalRankFusion } from '../src/knowledge/retrieval/hybrid-recall.service.js';
import { RetrievalService } from '../src/knowledge/retrieval/retrieval.service.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { ingestFolder } from '../src/knowledge/knowledge-seeder.service.js';
import { distinctSources, firstGoldRank, formatTable, loadRagEval, ragEvalDir, scoreByGroup } from './rag-eval-dataset.js';
import { benchConfig, createBenchDatabase, runBench } from './support.js';
import { RetrievalScope } from '../src/knowledge/collections/retrieval-scope.js';

/** The evaluation ranks every collection (its corpus is in `default`). */
const everything = RetrievalScope.unrestricted();

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
  const relevant = (label: Labelled, chunk: { source: string; text: string } | undefined) => !!chunk && chunk.source === label.source && chunk.text.includes(label.contains);

  const methods: Record<string, (q: string) => Promise<Array<{ source: string; text: string } | undefined>>> = {
    'full-text only': async (q) => (await recall.fullTextRanking(q, K, everything)).map((id) => chunks.get(id)),
    [`dense only (${denseBackend})`]: async (q) => (await recall.denseRanking(q, K, everything)).map((id) => chunks.get(id)),
    ...(denseBackend === 'memory'
      ? {}
      : {
          'dense only (memory)': async (q: string) => (await memoryIndex.rank(Float32Array.from((await embeddings.embed([q]))[0]), K)).map((id) => chunks.get(id)),
        }),
    'hybrid (RRF)': async (q) =>
      reciprocalRankFusion([await recall.fullTextRanking(q, 20, everything), await recall.denseRanking(q, 20, everything)])
        .slice(0, K)
        .map((f) => chunks.get(f.id)),
    'hybrid + auto-merge + rerank': async (q) => (await pipeline.search(q, K, { scope: everything })).hits.map((h) => ({ source: h.source, text: h.text })),
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

  await ragEval(onClose);
});

/** What the pipeline is asked for on rag-eval (the top_k SOURCES.md uses), and how deep the bare rankings go (RAG_RECALL_MULTIPLIER's default 4 × that). */
const RAG_EVAL_TOP_K = 10;
const RAG_EVAL_DEPTH = 4 * RAG_EVAL_TOP_K;

async function ragEval(onClose: (fn: () => Promise<unknown>) => void): Promise<void> {
  const dataset = await loadRagEval();
  console.log('');
  if ('missing' in dataset) {
    console.log(`rag-eval benchmark skipped: ${dataset.missing} (looked in ${ragEvalDir()}; set RAG_EVAL_DIR to its folder)`);
    return;
  }
  const db = await createBenchDatabase('bench_rag_eval');
  if (process.env.BENCH_KEEP_DATABASE === 'true') onClose(async () => console.log(`database kept: ${db.url}`));
  else onClose(() => db.drop());
  // The service's chunking unless KNOWLEDGE_CHUNK_SIZES / KNOWLEDGE_CHUNK_OVERLAP are set; nothing but the benchmark is loaded.
  const chunking = Object.fromEntries(['KNOWLEDGE_CHUNK_SIZES', 'KNOWLEDGE_CHUNK_OVERLAP'].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
  const config = benchConfig(db.url, { ...chunking, KNOWLEDGE_SEED_ON_START: 'false' });
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['warn', 'error'] });
  onClose(() => app.close());

  const started = performance.now();
  const ingested = await ingestFolder(app.get(DocumentsService), dataset.docsDir, 'bench:rag-eval');
  const ingestSeconds = (performance.now() - started) / 1000;
  const dataSource = app.get(DataSource);
  const recall = app.get(HybridRecall);
  const pipeline = app.get(RetrievalService);
  const embeddings = app.get(EmbeddingProvider);
  const memoryIndex = new MemoryDenseIndex(dataSource, embeddings.dimensions);
  const denseBackend = app.get(DenseRecall).backend;
  const sourceOf = new Map(
    (
      await sqlRows<{ id: string; source: string }>(
        dataSource,
        `SELECT c.id::text AS id, d.filename AS source FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id`,
      )
    ).map((row) => [row.id, row.source]),
  );
  const sources = (ids: string[]) => ids.map((id) => sourceOf.get(id));

  const methods: Array<{ method: string; rank: (q: string) => Promise<Array<string | undefined>> }> = [
    { method: 'full-text', rank: async (q) => sources(await recall.fullTextRanking(q, RAG_EVAL_DEPTH, everything)) },
    { method: `dense (${denseBackend})`, rank: async (q) => sources(await recall.denseRanking(q, RAG_EVAL_DEPTH, everything)) },
    ...(denseBackend === 'memory'
      ? []
      : [
          {
            method: 'dense (memory)',
            rank: async (q: string) => sources(await memoryIndex.rank(Float32Array.from((await embeddings.embed([q]))[0]), RAG_EVAL_DEPTH)),
          },
        ]),
    {
      method: 'hybrid RRF',
      rank: async (q) =>
        sources(reciprocalRankFusion([await recall.fullTextRanking(q, RAG_EVAL_DEPTH, everything), await recall.denseRanking(q, RAG_EVAL_DEPTH, everything)]).map((f) => f.id)),
    },
    { method: 'hybrid+merge+rerank', rank: async (q) => (await pipeline.search(q, RAG_EVAL_TOP_K, { scope: everything })).hits.map((hit) => hit.source) },
  ];

  const { questions } = dataset;
  const stored = new Set(sourceOf.values());
  const missingGold = [...new Set(questions.flatMap((q) => q.gold))].filter((file) => !stored.has(file));
  const { chunkSizes, chunkOverlap } = config.knowledge;
  console.log(
    `rag-eval (${dataset.dir}): ${ingested.filter((r) => !r.duplicate).length} documents ingested in ${ingestSeconds.toFixed(1)} s` +
      ` (${ingested.filter((r) => r.duplicate).length} duplicates skipped), ${sourceOf.size} chunks (sizes ${chunkSizes.join(',')}, overlap ${chunkOverlap}),` +
      ` ${questions.length} questions; local embeddings and rerank`,
  );
  if (missingGold.length > 0) console.log(`warning: ${missingGold.length} gold file(s) not in the knowledge base: ${missingGold.slice(0, 5).join(', ')}`);
  console.log(
    `a hit: any gold file among the first ${K} distinct sources; MRR@${K} by the first gold source;` +
      ` rankings ${RAG_EVAL_DEPTH} chunks deep, the pipeline asked for top_k ${RAG_EVAL_TOP_K}`,
  );
  const byMethod = [];
  for (const { method, rank } of methods) {
    const ranks: number[] = [];
    for (const question of questions) ranks.push(firstGoldRank(question, distinctSources(await rank(question.q), K)));
    byMethod.push({ method, scores: scoreByGroup(questions, ranks) });
  }
  console.log(formatTable(K, byMethod));
}
