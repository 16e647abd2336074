/**
 * Bulk ingest and search at scale: for each LEAVES (100 000 and 1 000 000 by
 * default), generated Chinese and English documents go through the real
 * ingest path (DocumentsService.ingest with `bulk: true`) into a database of
 * their own, once with the dense leg on pgvector and once on the in-memory
 * index. Printed: leaves/s per backend (and the time of the bulk loads' index
 * builds), then p50/p95 of the whole retrieval pipeline and of the dense leg
 * alone, and the dense leg's recall of the exact top recall_k (an in-memory
 * exact scan of the same leaves).
 *
 *   npm run bench:ingest                       (LEAVES=100000,1000000, QUERIES=200)
 *   LEAVES=20000 npm run bench:ingest          (a quick run)
 *   CORPUS=salad npm run bench:ingest          (the word salad of bench:search instead of topic-clustered text)
 *   BENCH_VERBOSE=true npm run bench:ingest    (the service's log too: each document's parse, embedding and insert times)
 *   EMBEDDINGS=topic npm run bench:ingest      (dense 384-dimension vectors clustered by topic, standing in for a model's)
 *   RAG_HNSW_EF_SEARCH=400 npm run bench:ingest (pgvector's candidate list per query; RAG_HNSW_BUILD_MEMORY too)
 *   EF_SWEEP=40,100,400 npm run bench:ingest   (the pgvector index's recall and latency at other candidate lists too)
 *
 * Goals: >= 2 000 leaves/s with the local embeddings and pgvector; dense
 * recall >= 0.95; pipeline p95 <= 50 ms at 100 000 leaves, <= 100 ms at 1 000 000.
 */
import 'reflect-metadata';
import { ConsoleLogger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { resolveRecallK } from '../src/knowledge/retrieval/recall-k.js';
import { DocumentsService } from '../src/knowledge/ingest/documents.service.js';
import { DenseRecall } from '../src/knowledge/index/dense/dense-recall.service.js';
import { MemoryDenseIndex } from '../src/knowledge/index/dense/memory-dense-index.js';
import { PgvectorStore } from '../src/knowledge/index/dense/pgvector.repository.js';
import { IndexIdentity } from '../src/knowledge/index/index-identity.js';
import { EmbeddingProvider } from '../src/knowledge/index/embeddings.js';
import { RetrievalService } from '../src/knowledge/retrieval/retrieval.service.js';
import { benchConfig, createBenchDatabase, fmt, median, percentile, timeEach } from './support.js';
import { RetrievalScope } from '../src/knowledge/collections/retrieval-scope.js';

/** Benches rank every collection. */
const everything = RetrievalScope.unrestricted();

const LEAVES = (process.env.LEAVES ?? '100000,1000000').split(',').map((v) => Number(v.trim()));
const QUERIES = Number(process.env.QUERIES ?? 200);
/** Queries whose dense ranking is compared with an exact scan. */
const RECALL_QUERIES = Number(process.env.RECALL_QUERIES ?? 100);
const LEAVES_PER_DOCUMENT = Number(process.env.LEAVES_PER_DOCUMENT ?? 10_000);
const CORPUS = process.env.CORPUS === 'salad' ? 'salad' : 'topic';
const BACKENDS = (process.env.BACKENDS ?? 'pgvector,memory').split(',').map((v) => v.trim());
const EMBEDDINGS = process.env.EMBEDDINGS === 'topic' ? 'topic' : 'local';
const TOPIC_DIMENSIONS = 384;
/** With pgvector's HNSW index: the recall and latency of these ef_search values too, on the same index. */
const EF_SWEEP = (process.env.EF_SWEEP ?? '').split(',').filter(Boolean).map(Number);

/** A small deterministic PRNG (mulberry32), so every run generates the same corpus. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Corpus {
  leaf(i: number): string;
  query(i: number): string;
  /** The topic of each topic word (topic corpus only): what TopicEmbeddings knows as a model knows meaning. */
  topicOf?: Map<string, number>;
}

/** A standard normal deviate from `random` (Box-Muller). */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * Stands in for a model's embeddings, which cannot run offline: dense
 * vectors with the cluster structure a model gives topical text (the local
 * hash embeddings are sparse and structureless, which no graph index suits).
 * A word of a topic adds its topic's centroid and some of its own random
 * direction; any other word only its own, weaker; the sum is normalized.
 * English words are split at spaces, Chinese text into the corpus's
 * two-character words.
 */
class TopicEmbeddings extends EmbeddingProvider {
  readonly name = 'bench-topic';
  readonly provider = 'bench';
  readonly model = 'topic-1';
  override readonly ingestBatchSize = 64;
  override readonly embedsInProcess = true;
  private readonly directions = new Map<string, Float32Array>();

  constructor(
    readonly dimensions: number,
    private readonly topicOf: Map<string, number>,
  ) {
    super();
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedText(text));
  }

  private embedText(text: string): number[] {
    const sum = new Float64Array(this.dimensions);
    for (const word of this.words(text)) {
      const topic = this.topicOf.get(word);
      const own = this.direction(`w:${word}`);
      const weight = topic === undefined ? 0.4 : 0.7;
      for (let d = 0; d < this.dimensions; d += 1) sum[d] += weight * own[d];
      if (topic !== undefined) {
        const centroid = this.direction(`t:${topic}`);
        for (let d = 0; d < this.dimensions; d += 1) sum[d] += centroid[d];
      }
    }
    let squares = 0;
    for (let d = 0; d < this.dimensions; d += 1) squares += sum[d] * sum[d];
    const norm = Math.sqrt(squares) || 1;
    return Array.from(sum, (v) => v / norm);
  }

  private words(text: string): string[] {
    if (/[a-z]/i.test(text)) return text.toLowerCase().match(/[a-z]+/g) ?? [];
    const han = text.replace(/[^\u4e00-\u9fff]/g, '');
    return Array.from({ length: Math.ceil(han.length / 2) }, (_, i) => han.slice(2 * i, 2 * i + 2));
  }

  /** A random unit direction per key, the same every run. */
  private direction(key: string): Float32Array {
    let vector = this.directions.get(key);
    if (!vector) {
      const random = prng(hashOf(key));
      vector = Float32Array.from({ length: this.dimensions }, () => gaussian(random) / Math.sqrt(this.dimensions));
      this.directions.set(key, vector);
    }
    return vector;
  }
}

/** bench:search's generator: every leaf is uniformly random words, so no leaf is much nearer a query than the rest. */
function saladCorpus(): Corpus {
  const random = prng(42);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tor', 'vex', 'sun', 'dal', 'pri', 'zo', 'quin', 'bel', 'ash', 'nor', 'fi', 'gus'];
  const en = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(random() * 2) }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
  const cjk = '保修退货积分会员路由器网络设置重置固件天气政策酒店报销餐费航班充电电池屏幕耳机相机镜头快递包装客服发票价格折扣库存仓库';
  const zh = Array.from({ length: 1500 }, () => Array.from({ length: 2 }, () => cjk[Math.floor(random() * cjk.length)]).join(''));
  const pick = <T>(r: () => number, list: T[]) => list[Math.floor(r() * list.length)];
  const queryRandom = prng(7);
  return {
    leaf: (i) => (i % 2 === 0 ? `${Array.from({ length: 22 }, () => pick(random, en)).join(' ')}.` : `${Array.from({ length: 30 }, () => pick(random, zh)).join('')}。`),
    query: (i) => (i % 2 === 0 ? `${pick(queryRandom, en)} ${pick(queryRandom, en)} ${pick(queryRandom, en)}?` : `${pick(queryRandom, zh)}${pick(queryRandom, zh)}是什么？`),
  };
}

/**
 * Text about topics: 2 000 topics, each with 30 words of its own; half of a
 * leaf's words come from its topic, half from a Zipf-distributed vocabulary
 * every topic shares (20 000 English, 12 000 Chinese words). A query names
 * two words of one topic (and one common word in English).
 */
function topicCorpus(): Corpus {
  const random = prng(4242);
  const syllables = 'ka lo mi ren tor vex sun dal pri zo quin bel ash nor fi gus mar tel os un ber cal den hol jin pax ro sel tam ul wen yor'.split(' ');
  const enWords = new Set<string>();
  while (enWords.size < 20_000) {
    enWords.add(Array.from({ length: 2 + Math.floor(random() * 2) }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
  }
  const en = [...enWords];
  const cjk =
    '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
  const zhWords = new Set<string>();
  while (zhWords.size < 12_000) zhWords.add(cjk[Math.floor(random() * cjk.length)] + cjk[Math.floor(random() * cjk.length)]);
  const zh = [...zhWords];
  const zipf = (n: number) => {
    const cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i += 1) cdf[i] = sum += 1 / (i + 1);
    return (r: () => number) => {
      const x = r() * sum;
      let lo = 0;
      let hi = n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
  };
  const enZipf = zipf(en.length);
  const zhZipf = zipf(zh.length);
  const TOPICS = 2000;
  const topicWords = (vocabulary: string[]) => Array.from({ length: TOPICS }, () => Array.from({ length: 30 }, () => vocabulary[Math.floor(random() * vocabulary.length)]));
  const enTopics = topicWords(en);
  const zhTopics = topicWords(zh);
  const pick = <T>(r: () => number, list: T[]) => list[Math.floor(r() * list.length)];
  const word = (topic: string[], vocabulary: string[], common: (r: () => number) => number) => (random() < 0.5 ? pick(random, topic) : vocabulary[common(random)]);
  const queryRandom = prng(77);
  const topicOf = new Map<string, number>();
  enTopics.forEach((words, t) => words.forEach((word) => topicOf.set(word, t)));
  zhTopics.forEach((words, t) => words.forEach((word) => topicOf.set(word, TOPICS + t)));
  return {
    topicOf,
    leaf: (i) => {
      const t = Math.floor(random() * TOPICS);
      return i % 2 === 0
        ? `${Array.from({ length: 22 }, () => word(enTopics[t], en, enZipf)).join(' ')}.`
        : `${Array.from({ length: 30 }, () => word(zhTopics[t], zh, zhZipf)).join('')}。`;
    },
    query: (i) => {
      const t = Math.floor(queryRandom() * TOPICS);
      return i % 2 === 0
        ? `${pick(queryRandom, enTopics[t])} ${pick(queryRandom, enTopics[t])} ${en[enZipf(queryRandom)]}?`
        : `${pick(queryRandom, zhTopics[t])}${pick(queryRandom, zhTopics[t])}是什么？`;
    },
  };
}

const newCorpus = () => (CORPUS === 'salad' ? saladCorpus() : topicCorpus());

const line = (label: string, times: number[]) => `  ${label.padEnd(44)} p50 ${fmt(median(times)).padStart(10)}   p95 ${fmt(percentile(times, 95)).padStart(10)}`;

/** Per-query milliseconds, after 20 untimed queries. */
const measure = <T>(queries: readonly T[], fn: (q: T, i: number) => Promise<unknown>) => timeEach(queries, fn, 20);

async function run(leafTarget: number, backend: string): Promise<void> {
  const db = await createBenchDatabase('bench_ingest');
  const settings = {
    // One level of 220-character chunks: every generated sentence is one leaf.
    KNOWLEDGE_CHUNK_SIZES: '220',
    KNOWLEDGE_CHUNK_OVERLAP: '0',
    KNOWLEDGE_SEED_ON_START: 'false',
    RAG_DENSE_BACKEND: backend,
  };
  const corpus = newCorpus();
  if (EMBEDDINGS === 'topic') {
    if (!corpus.topicOf) throw new Error('EMBEDDINGS=topic needs the topic corpus');
    Object.assign(settings, { EMBEDDING_DIMENSIONS: String(TOPIC_DIMENSIONS) });
  }
  for (const name of ['RAG_HNSW_EF_SEARCH', 'RAG_HNSW_BUILD_MEMORY']) {
    if (process.env[name]) Object.assign(settings, { [name]: process.env[name] });
  }
  const config = benchConfig(db.url, settings);
  let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).setLogger(
    new ConsoleLogger({ logLevels: process.env.BENCH_VERBOSE === 'true' ? ['log', 'warn', 'error'] : ['warn', 'error'] }),
  );
  if (EMBEDDINGS === 'topic') builder = builder.overrideProvider(EmbeddingProvider).useValue(new TopicEmbeddings(TOPIC_DIMENSIONS, corpus.topicOf!));
  const app = await builder.compile();
  await app.init();
  try {
    const dense = app.get(DenseRecall);
    const embeddingsName = app.get(EmbeddingProvider).name;
    console.log(
      `\n${leafTarget} leaves (${CORPUS}), ${embeddingsName} embeddings, RAG_DENSE_BACKEND=${backend}: dense backend ${dense.backend}` +
        (dense.backend === 'pgvector-hnsw' ? `, ef_search ${config.dense.hnswEfSearch}` : ''),
    );
    if (backend !== 'memory' && dense.backend === 'memory') {
      console.log('  this PostgreSQL has no pgvector: skipped');
      return;
    }
    const documents = app.get(DocumentsService);
    let leaves = 0;
    let indexMs = 0;
    let indexStarted = 0;
    const started = performance.now();
    for (let doc = 0; leaves < leafTarget; doc += 1) {
      const count = Math.min(LEAVES_PER_DOCUMENT, leafTarget - leaves);
      const text = Array.from({ length: count }, (_, i) => corpus.leaf(leaves + i)).join('\n');
      const last = leaves + count >= leafTarget;
      const { document } = await documents.ingest(`generated-${doc}.txt`, Buffer.from(text, 'utf8'), 'bench', {
        bulk: true,
        // One load of many documents, as a folder's upload jobs are: the index is built once, after the last.
        deferIndexBuild: () => !last,
        onProgress: (stage, done) => {
          if (stage !== 'indexing') return;
          if (done === 0) indexStarted = performance.now();
          else indexMs += performance.now() - indexStarted;
        },
      });
      leaves += document.leaf_count;
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `  ingest: ${leaves} leaves in ${seconds.toFixed(1)} s = ${Math.round(leaves / seconds)} leaves/s ` +
        `(documents of ${LEAVES_PER_DOCUMENT} leaves, one bulk load; of it the index build after the last ${(indexMs / 1000).toFixed(1)} s)`,
    );

    const { recall_k: recallK } = resolveRecallK(config.knowledge.recallKRaw, config.knowledge.recallMultiplier, config.knowledge.topK);
    const queries = Array.from({ length: QUERIES }, (_, i) => corpus.query(i));
    console.log(`  ${QUERIES} queries (half Chinese), top_k ${config.knowledge.topK}, recall_k ${recallK}`);
    const pipeline = app.get(RetrievalService);
    console.log(line('pipeline (recall, merge, rerank)', await measure(queries, (q) => pipeline.search(q, config.knowledge.topK, { scope: everything }))));
    console.log(line(`dense leg (${dense.backend})`, await measure(queries, (q) => dense.rank(q, recallK, everything))));
    if (dense.backend !== 'memory') {
      const embeddings = app.get(EmbeddingProvider);
      const exactIndex = new MemoryDenseIndex(app.get(DataSource), embeddings.dimensions);
      let found = 0;
      const sample = queries.slice(0, RECALL_QUERIES);
      const vectors = await Promise.all(sample.map(async (q) => Float32Array.from((await embeddings.embed([q]))[0])));
      const exact = await Promise.all(vectors.map(async (vector) => new Set(await exactIndex.rank(vector, recallK))));
      for (const [i, q] of sample.entries()) {
        found += (await dense.rank(q, recallK, everything)).ids.filter((id) => exact[i].has(id)).length / Math.max(1, exact[i].size);
      }
      console.log(`  dense leg recall@${recallK} of the exact scan (${sample.length} queries): ${(found / sample.length).toFixed(3)}`);
      // The same index at other candidate lists (RAG_HNSW_EF_SEARCH), to choose it by measure.
      for (const ef of EF_SWEEP.filter(() => dense.backend === 'pgvector-hnsw')) {
        const store = new PgvectorStore(app.get(DataSource), embeddings.dimensions, ef, { spaceId: () => app.get(IndexIdentity).spaceId });
        const times = await measure(vectors, (vector) => store.rank(vector, recallK));
        let hits = 0;
        for (const [i, vector] of vectors.entries()) {
          hits += (await store.rank(vector, recallK)).filter((id) => exact[i].has(id)).length / Math.max(1, exact[i].size);
        }
        console.log(`${line(`  ef_search ${ef}: recall@${recallK} ${(hits / vectors.length).toFixed(3)}`, times)}`);
      }
    } else {
      console.log(`  dense leg recall@${recallK}: 1 (it is the exact scan)`);
    }
  } finally {
    await app.close();
    if (process.env.BENCH_KEEP_DATABASE === 'true') console.log(`database kept: ${db.url}`);
    else await db.drop();
  }
}

async function main(): Promise<void> {
  for (const leaves of LEAVES) for (const backend of BACKENDS) await run(leaves, backend);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
