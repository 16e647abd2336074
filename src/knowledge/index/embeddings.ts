import { OpenAIEmbeddings } from '@langchain/openai';
import { tokenize } from '../../common/text.js';
import type { AppConfig } from '../../config/app-config.js';
import { modelRetryPolicy, openAIClientFields } from '../../models/openai-endpoint.js';

/** Turns texts into unit-length vectors; the knowledge base's dense retrieval leg. */
export abstract class EmbeddingProvider {
  abstract readonly name: string;
  /** The provider (EMBEDDING_PROVIDER) and model that, with `dimensions`, name the vector space: vectors of different spaces are not comparable. */
  abstract readonly provider: string;
  abstract readonly model: string;
  abstract readonly dimensions: number;
  /**
   * Vectors with few non-zero dimensions and no low-dimensional structure
   * (feature hashing): an approximate graph index (HNSW) finds only about
   * half of their exact neighbours, so RAG_DENSE_BACKEND=auto ranks them with
   * the exact in-memory scan, which sums only a query's non-zero dimensions.
   */
  readonly sparse: boolean = false;
  /** Texts per `embed` call during ingest: small where embedding runs on the event loop, large for a remote API. */
  readonly ingestBatchSize: number = 256;
  /**
   * Embeds on this process's CPU, without waiting on I/O. Ingest then embeds
   * each batch of leaves while the batch before is written, inside the
   * document's transaction; other providers (a remote API) embed the whole
   * document before the transaction opens, so that no transaction waits on them.
   */
  readonly embedsInProcess: boolean = false;
  abstract embed(texts: string[]): Promise<number[][]>;

  /**
   * `embed` for texts whose `tokenize` tokens are already known (ingest
   * tokenizes each leaf once, for its search text and its embedding); a
   * provider that does not use them embeds the texts.
   */
  embedTokenized(texts: string[], _tokens: string[][]): Promise<number[][]> {
    return this.embed(texts);
  }
}

function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Offline embeddings (EMBEDDING_PROVIDER=local): feature hashing of words,
 * Chinese character bigrams and Latin character trigrams into a fixed number
 * of dimensions, log-scaled and normalized. Deterministic and fast; it
 * captures shared vocabulary and spelling, not meaning.
 */
export class LocalHashEmbeddings extends EmbeddingProvider {
  static readonly providerName = 'local';

  static fromConfig(config: AppConfig): LocalHashEmbeddings {
    return new LocalHashEmbeddings(config.embeddings.dimensions);
  }

  readonly name = 'local-hash';
  readonly provider = LocalHashEmbeddings.providerName;
  /** Bump when embedTokens would give any text another vector. */
  readonly model = 'local-hash-1';
  /** Computed on the event loop: a batch of this many takes a few milliseconds. */
  override readonly ingestBatchSize = 64;
  override readonly sparse = true;
  override readonly embedsInProcess = true;

  constructor(readonly dimensions: number) {
    super();
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  override async embedTokenized(texts: string[], tokens: string[][]): Promise<number[][]> {
    return texts.map((text, i) => this.embedTokens(tokens[i] ?? tokenize(text)));
  }

  embedOne(text: string): number[] {
    return this.embedTokens(tokenize(text));
  }

  /** The embedding of a text from its `tokenize` tokens. */
  embedTokens(tokens: string[]): number[] {
    const vector = new Float64Array(this.dimensions);
    const features: string[] = [];
    for (const token of tokens) {
      features.push(`w:${token}`);
      if (/^[a-z0-9]{4,}$/.test(token)) {
        const padded = `#${token}#`;
        for (let i = 0; i + 3 <= padded.length; i += 1) features.push(`g:${padded.slice(i, i + 3)}`);
      }
    }
    const counts = new Map<string, number>();
    for (const feature of features) counts.set(feature, (counts.get(feature) ?? 0) + 1);
    for (const [feature, count] of counts) {
      const hash = fnv1a(feature);
      const weight = (feature.startsWith('w:') ? 1 : 0.5) * (1 + Math.log(count));
      vector[hash % this.dimensions] += hash & 0x80000000 ? -weight : weight;
    }
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    // Most dimensions are 0 for a chunk-sized text; they need no rounding.
    return Array.from(vector, (v) => (v === 0 ? 0 : Number((v / norm).toFixed(6))));
  }
}

/**
 * Any OpenAI-compatible embeddings endpoint (EMBEDDING_PROVIDER=openai):
 * EMBEDDING_BASE_URL and EMBEDDING_API_KEY, each falling back to its LLM_
 * counterpart.
 */
export class OpenAICompatibleEmbeddings extends EmbeddingProvider {
  static readonly providerName = 'openai';

  static fromConfig(config: AppConfig): OpenAICompatibleEmbeddings {
    return new OpenAICompatibleEmbeddings(config);
  }

  readonly name: string;
  readonly provider = OpenAICompatibleEmbeddings.providerName;
  readonly model: string;
  readonly dimensions: number;
  private readonly client: OpenAIEmbeddings;

  constructor(config: AppConfig) {
    super();
    this.name = config.embeddings.model;
    this.model = config.embeddings.model;
    this.dimensions = config.embeddings.dimensions;
    this.client = new OpenAIEmbeddings({
      model: config.embeddings.model,
      dimensions: config.embeddings.dimensions,
      ...openAIClientFields({
        baseUrl: config.embeddings.baseUrl,
        apiKey: config.embeddings.apiKey,
        variables: { provider: 'EMBEDDING_PROVIDER', baseUrl: 'EMBEDDING_BASE_URL', apiKey: 'EMBEDDING_API_KEY' },
      }),
      timeout: config.llm.timeoutMs,
      maxRetries: config.llm.maxRetries,
      onFailedAttempt: modelRetryPolicy,
    });
  }

  async embed(texts: string[]): Promise<number[][]> {
    return this.client.embedDocuments(texts);
  }
}
