import { standardForm } from '../../common/standard-form.js';
import { englishKeysOf, holdsEnglishWord, isUntranslatedWord, translatedKeys } from '../../common/glossary.js';
import { isAskingWord } from '../../common/topic-words.js';
import { isFunctionWordKey } from '../../common/function-words.js';
import { comparedTokens, isEnglishWord, matchKey, wordTokens } from '../../common/match-keys.js';
import { durationKeys } from '../../common/durations.js';
import { broaderKeys } from '../../common/hypernyms.js';
import { inverseDocumentFrequency } from '../../common/inverse-frequency.js';
import { containsCjk, contentWords, tokenize, withoutClitic } from '../../common/text.js';
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
 * What a query term that no passage holds counts in a passage that holds a broader word for it by WordNet ("alcohol"
 * for "wine", see common/hypernyms): half, as in the local model's answers. Only where no passage holds the term
 * itself, the documents then saying it otherwise: where some do, the broader word tells the others apart by chance,
 * and counting it lowered bench:eval's MuSiQue recall@5 from 1.000 to 0.974.
 */
const BROADER_SHARE = 0.5;

/**
 * Offline rerank (RERANK_PROVIDER=local): half the share of the query's
 * terms the passage contains (by stem, see common/match-keys; a term no passage holds also by a broader word, see
 * BROADER_SHARE), each weighed by its rarity among the passages
 * scored together (see termWeights), half the cosine similarity of local
 * embeddings.
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

  async score(asked: string, texts: string[]): Promise<number[]> {
    // Compared in the standard form (see common/standard-form), question and passages alike.
    const query = standardForm(asked);
    const passages = texts.map(standardForm);
    // A word is compared without its clitic ("node's" holds "node"), and a stopword contracted with one ("what's") is none.
    const queryTokens = comparedTokens(tokenize(query)).map(withoutClitic);
    // A Chinese question is counted by its words: the character bigrams `tokenize` adds across two of them (分能 of
    // 积分|能) are in no passage, and would hold any passage's share of the question down.
    const terms = new Set((containsCjk(query) ? wordTokens(query, queryTokens) : queryTokens).map(matchKey));
    const across = crossLanguageTerms(query, queryTokens);
    // A Chinese question with English words in it ("Gold member 有什么福利？") is in both languages: a passage in either
    // holds some of its words only as translations.
    const mixed = mixedLanguage(query);
    // Each text is tokenized once, for its terms and its embedding alike.
    const q = this.embeddings.embedTokens(queryTokens);
    const tokenized = passages.map((passage) => tokenize(passage).map(withoutClitic));
    // Words are compared by their match keys, as the local judge and model compare them: "receipt" is held by "receipts".
    const wordSets = tokenized.map((tokens) => new Set(tokens.map(matchKey)));
    const { weights, unheld } = termWeights(terms, wordSets);
    // A broader word that the question names itself ("wine and alcohol") is counted as that word, not again.
    const broaderOfUnheld = new Map(unheld.map((term) => [term, [...broaderKeys(term)].filter((key) => !terms.has(key))]));
    const totalWeight = [...weights.values()].reduce((sum, weight) => sum + weight, 0);
    return passages.map((passage, index) => {
      const tokens = tokenized[index];
      const words = wordSets[index];
      let covered = 0;
      for (const [term, weight] of weights) {
        if (words.has(term)) covered += weight;
        else if (broaderOfUnheld.get(term)?.some((key) => words.has(key))) covered += BROADER_SHARE * weight;
      }
      let coverage = totalWeight > 0 ? covered / totalWeight : 0;
      // A passage in the other language than the question can hold its names and model numbers as they are, and its
      // other words only as translations: its share of those, at half weight.
      if (across.length > 0 && (mixed || containsCjk(query) !== containsCjk(passage))) {
        coverage = Math.max(coverage, 0.5 * crossLanguageCoverage(across, passage, tokens));
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

/**
 * Each query term's weight in a passage's coverage: how rare it is among the
 * passages being scored (BM25's inverse document frequency), so that the
 * term that tells them apart ("firmware" among router manuals) counts for
 * more than one most of them hold ("router"). A term that no passage holds
 * (a misspelling, a word the documents say otherwise) tells none apart: it
 * weighs as much as the held terms do on average, neither more nor less.
 * Only for terms in the question's own language: a translation's rarity says
 * as much about the glossary's senses as about the passages, and weighing by
 * it lowered bench:answers' cross-language answers. Also returns the terms no passage holds.
 */
function termWeights(terms: ReadonlySet<string>, passages: ReadonlyArray<ReadonlySet<string>>): { weights: Map<string, number>; unheld: string[] } {
  const weights = new Map<string, number>();
  const unheld: string[] = [];
  for (const term of terms) {
    const holding = passages.filter((words) => words.has(term)).length;
    if (holding === 0) unheld.push(term);
    else weights.set(term, inverseDocumentFrequency(passages.length, holding));
  }
  const heldWeight = weights.size > 0 ? [...weights.values()].reduce((sum, weight) => sum + weight, 0) / weights.size : 1;
  for (const term of unheld) weights.set(term, heldWeight);
  return { weights, unheld };
}

/**
 * What a passage in the other language than the question can hold of it:
 * each Latin word (a name, a model number, or a word of an English question
 * that neither asks nor only joins) as its match key or, for an English word, as
 * a translation (see holdsEnglishWord); and each Chinese word of a Chinese
 * question as the English keys it translates to (see common/glossary), when
 * it has any; and the spans of time it states, in any unit ("a month" held
 * by "30 天", see common/durations).
 */
type CrossLanguageTerm = { latin: string; word: string } | { translations: readonly string[]; chinese: string } | { durations: ReadonlySet<string> };

/** The match keys of the English units of time: a question that states a span ("within a month") is matched by the span. */
const TIME_UNITS = new Set(['second', 'minute', 'hour', 'day', 'week', 'fortnight', 'month', 'year'].map(matchKey));

/** A lower-case English word of three letters or more: not a unit or an acronym ("GHz", "USD", "VIP"), nor a name. */
const LOWER_CASE_WORD = /(?<![\p{L}\p{N}])[a-z]{3,}(?![\p{L}\p{N}])/gu;

/** A Chinese question with English words in it ("我的 points 什么时候 expire？"): in both languages. */
function mixedLanguage(question: string): boolean {
  return containsCjk(question) && [...question.matchAll(LOWER_CASE_WORD)].some(([word]) => isEnglishWord(word) && !isAskingWord(word) && !isUntranslatedWord(word));
}

function crossLanguageTerms(query: string, queryTokens: string[]): CrossLanguageTerm[] {
  const durations = durationKeys(query);
  const latin = queryTokens
    // A function word ("under") or a light verb ("have") is never what a glossary translates: no passage in the other language holds it.
    .filter((token) => !containsCjk(token) && !isAskingWord(token) && !isFunctionWordKey(matchKey(token)) && !isUntranslatedWord(token))
    .filter((token) => durations.size === 0 || !TIME_UNITS.has(matchKey(token)))
    .map((token) => ({ latin: matchKey(token), word: token }));
  // Chinese words as a reader cuts them: the bigrams between two words (通城 of 普通|城市) are words of their own in the glossary.
  // A Chinese function word (以后 "after", 才能 of 才能用) no more than an English one.
  const chinese = contentWords(query).flatMap((word) => {
    const translations = containsCjk(word) && durationKeys(word).size === 0 && !isFunctionWordKey(word) ? englishKeysOf(word) : [];
    return translations.length > 0 ? [{ translations, chinese: word }] : [];
  });
  return [...latin, ...chinese, ...(durations.size > 0 ? [{ durations }] : [])];
}

/**
 * The share of `terms` a passage holds as written or translated. A Chinese passage for a question with English words
 * in it (see mixedLanguage) holds the question's Chinese words only as written: through translations, two Chinese words
 * meet in some English sense by chance (积分 and 指示 in "point").
 */
function crossLanguageCoverage(terms: CrossLanguageTerm[], passage: string, passageTokens: string[]): number {
  const chinesePassage = containsCjk(passage);
  const keys = new Set(passageTokens.map(matchKey));
  const translated = translatedKeys(passageTokens);
  let passageDurations: Set<string> | undefined;
  const holds = (term: CrossLanguageTerm) => {
    if ('latin' in term) return keys.has(term.latin) || holdsEnglishWord(passage, translated, term.word);
    if ('translations' in term) return chinesePassage ? passage.includes(term.chinese) : term.translations.some((key) => keys.has(key) || translated.has(key));
    passageDurations ??= durationKeys(passage);
    return [...term.durations].some((key) => passageDurations!.has(key));
  };
  const covered = terms.filter(holds).length;
  return covered / terms.length;
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
