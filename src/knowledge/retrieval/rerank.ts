import { containsCjk, tokenize } from '../../common/text.js';
import { AppConfig, ConfigValidationError } from '../../config/app-config.js';
import { LocalHashEmbeddings } from '../index/embeddings.js';

/** Scores passages against a query, 0..1, higher is more relevant; one score per passage, in order. */
export abstract class RerankProvider {
  abstract readonly model: string;
  abstract readonly endpoint: string | null;
  abstract readonly timeoutMs: number;
  abstract score(query: string, passages: string[]): Promise<number[]>;
}

/**
 * Offline rerank (RERANK_PROVIDER=local): half the share of the query's
 * terms the passage contains, half the cosine similarity of local embeddings.
 */
export class LocalRerank extends RerankProvider {
  static readonly providerName = 'local';

  static fromConfig(config: AppConfig): LocalRerank {
    return new LocalRerank(config.rerank.timeoutMs);
  }

  readonly model = 'local-lexical-cosine';
  readonly endpoint = null;
  private readonly embeddings = new LocalHashEmbeddings(256);

  constructor(readonly timeoutMs: number) {
    super();
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    const queryTokens = tokenize(query);
    const terms = new Set(queryTokens);
    const crossScriptTerms = containsCjk(query) ? [...terms].filter((term) => !containsCjk(term)) : [];
    // Each text is tokenized once, for its terms and its embedding alike.
    const q = this.embeddings.embedTokens(queryTokens);
    return passages.map((passage) => {
      const tokens = tokenize(passage);
      const words = new Set(tokens);
      let covered = 0;
      for (const term of terms) if (words.has(term)) covered += 1;
      let coverage = terms.size ? covered / terms.size : 0;
      // A passage in another script than the question ("X2 节点重置要按几秒" and an English manual) can hold only the
      // question's words that need no translation (names, model numbers): its share of those, at half weight.
      if (crossScriptTerms.length > 0 && !containsCjk(passage)) {
        coverage = Math.max(coverage, (0.5 * crossScriptTerms.filter((term) => words.has(term)).length) / crossScriptTerms.length);
      }
      const p = this.embeddings.embedTokens(tokens);
      const cosine = Math.max(
        0,
        q.reduce((sum, v, i) => sum + v * p[i], 0),
      );
      return Number((0.5 * coverage + 0.5 * cosine).toFixed(4));
    });
  }
}

export class RerankUnavailableError extends Error {}

/** A Jina/Cohere-style HTTP rerank API: POST {model, query, documents, top_n} → {results: [{index, relevance_score}]}. */
export class HttpRerank extends RerankProvider {
  static readonly providerName = 'http';

  static fromConfig(config: AppConfig): HttpRerank {
    return new HttpRerank(config.rerank);
  }

  readonly model: string;
  readonly endpoint: string;
  readonly timeoutMs: number;

  constructor(private readonly config: AppConfig['rerank']) {
    super();
    if (!config.url) throw new ConfigValidationError([{ variable: 'RERANK_URL', message: 'required when RERANK_PROVIDER=http' }]);
    this.model = config.model;
    this.endpoint = config.url;
    this.timeoutMs = config.timeoutMs;
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(this.config.apiKey ? { Authorization: `Bearer ${this.config.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.model, query, documents: passages, top_n: passages.length }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      throw new RerankUnavailableError(name === 'TimeoutError' ? `rerank timed out after ${this.timeoutMs} ms` : `rerank endpoint unreachable: ${(error as Error).message}`);
    }
    if (!response.ok) throw new RerankUnavailableError(`rerank endpoint answered HTTP ${response.status}`);
    const body = (await response.json().catch(() => null)) as { results?: Array<{ index: number; relevance_score: number }> } | null;
    if (!Array.isArray(body?.results)) throw new RerankUnavailableError('rerank endpoint sent no results');
    const scores = passages.map(() => 0);
    for (const result of body.results) {
      if (Number.isInteger(result.index) && result.index >= 0 && result.index < passages.length && Number.isFinite(result.relevance_score)) {
        scores[result.index] = result.relevance_score;
      }
    }
    return scores;
  }
}

/** RERANK_PROVIDER=none: no reranker; the fused order stands. */
export class NoRerank {
  static readonly providerName = 'none';

  static fromConfig(): null {
    return null;
  }
}
