/**
 * Search latency at scale: LEAVES (100 000 by default) generated leaf chunks
 * in Chinese and English, ingested through the real document path, then
 * p50/p95 of the retrieval pipeline (hybrid recall, auto-merge, local rerank)
 * and of hybrid recall alone. Goal: p95 under 50 ms on this machine.
 *
 *   npm run bench:search          (LEAVES=100000, QUERIES=200)
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module.js';
import { DocumentsService } from '../src/knowledge/documents.service.js';
import { HybridRecall } from '../src/knowledge/hybrid-recall.service.js';
import { RetrievalService } from '../src/knowledge/retrieval.service.js';
import { benchConfig, fmt, median, percentile, runBench } from './support.js';

const LEAVES = Number(process.env.LEAVES ?? 100_000);
const QUERIES = Number(process.env.QUERIES ?? 200);
const LEAVES_PER_DOCUMENT = 2000;

/** A small deterministic PRNG (mulberry32), so every run generates the same corpus. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tor', 'vex', 'sun', 'dal', 'pri', 'zo', 'quin', 'bel', 'ash', 'nor', 'fi', 'gus'];
const EN_WORDS = Array.from({ length: 3000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 2) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''),
);
const CJK = '保修退货积分会员路由器网络设置重置固件天气政策酒店报销餐费航班充电电池屏幕耳机相机镜头快递包装客服发票价格折扣库存仓库';
const ZH_WORDS = Array.from({ length: 1500 }, () =>
  Array.from({ length: 2 }, () => CJK[Math.floor(random() * CJK.length)]).join(''),
);
const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];

function leafText(i: number): string {
  if (i % 2 === 0) return `${Array.from({ length: 22 }, () => pick(EN_WORDS)).join(' ')}.`;
  return `${Array.from({ length: 30 }, () => pick(ZH_WORDS)).join('')}。`;
}

runBench('bench_search', async (databaseUrl, onClose) => {
  // One level of 200-character chunks: every generated sentence is one leaf.
  const config = benchConfig(databaseUrl, { KNOWLEDGE_CHUNK_SIZES: '220', KNOWLEDGE_CHUNK_OVERLAP: '0', KNOWLEDGE_SEED_ON_START: 'false' });
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['warn', 'error'] });
  onClose(() => app.close());
  const documents = app.get(DocumentsService);

  const ingestStarted = performance.now();
  let leaves = 0;
  for (let doc = 0; leaves < LEAVES; doc += 1) {
    const count = Math.min(LEAVES_PER_DOCUMENT, LEAVES - leaves);
    const text = Array.from({ length: count }, (_, i) => leafText(leaves + i)).join('\n');
    const { document } = await documents.ingest(`generated-${doc}.txt`, Buffer.from(text, 'utf8'), 'bench');
    leaves += document.leaf_count;
  }
  console.log(`${leaves} leaf chunks ingested in ${((performance.now() - ingestStarted) / 1000).toFixed(1)} s`);

  const pipeline = app.get(RetrievalService);
  const recall = app.get(HybridRecall);
  const queries = Array.from({ length: QUERIES }, (_, i) =>
    i % 2 === 0 ? `${pick(EN_WORDS)} ${pick(EN_WORDS)} ${pick(EN_WORDS)}?` : `${pick(ZH_WORDS)}${pick(ZH_WORDS)}是什么？`,
  );
  const loadStarted = performance.now();
  await pipeline.search(queries[0], 5); // loads the dense index once
  console.log(`first query (loads the in-memory dense index): ${fmt(performance.now() - loadStarted)}`);

  const measure = async (fn: (q: string) => Promise<unknown>) => {
    const times: number[] = [];
    for (const q of queries) {
      const started = performance.now();
      await fn(q);
      times.push(performance.now() - started);
    }
    return times;
  };
  const fullTextTimes = await measure((q) => recall.fullTextRanking(q, 20));
  const denseTimes = await measure((q) => recall.denseRanking(q, 20));
  const recallTimes = await measure((q) => recall.recall(q, 20));
  const pipelineTimes = await measure((q) => pipeline.search(q, 5));
  const line = (label: string, times: number[]) =>
    `${label.padEnd(44)} p50 ${fmt(median(times)).padStart(10)}   p95 ${fmt(percentile(times, 95)).padStart(10)}`;
  console.log(`${QUERIES} queries (half Chinese), top_k 5, recall_k 20`);
  console.log(line('full-text leg (PostgreSQL, GIN)', fullTextTimes));
  console.log(line('dense leg (in-memory scan)', denseTimes));
  console.log(line('hybrid recall (both legs in parallel, RRF)', recallTimes));
  console.log(line('pipeline (recall, auto-merge, local rerank)', pipelineTimes));
});
