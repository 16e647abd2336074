import { stemmer } from 'stemmer';
import { containsCjk, tokenize } from '../../common/text.js';

/** Most distinct terms a full-text query keeps: each term costs a posting-list scan and a share of every ts_rank. */
export const FULL_TEXT_MAX_TERMS = 32;

const NOT_LEXEME = /[^\p{L}\p{N}_]/gu;

/** The text PostgreSQL indexes for a chunk: its tokens (words and Chinese bigrams), space-separated, for the `simple` configuration. */
export function searchDocumentText(text: string): string {
  return searchTextOfTokens(tokenize(text));
}

/** searchDocumentText from tokens already made by `tokenize` (ingest tokenizes each leaf once, for this and its embedding). */
export function searchTextOfTokens(tokens: string[]): string {
  return tokens
    .map((token) => token.replace(NOT_LEXEME, ''))
    .filter(Boolean)
    .join(' ');
}

export interface FullTextQueryTerms {
  /** The kept terms, quoted as tsquery lexemes. */
  lexemes: string[];
  /** Distinct terms the query had. */
  total: number;
  /** Distinct terms left out (beyond `maxTerms`). */
  dropped: number;
}

/**
 * The query's distinct tokens as tsquery lexemes, at most `maxTerms` of
 * them. A longer query keeps the terms that come first in its text (a
 * question usually leads; whatever follows is context), in the order
 * tokenize gives them; the choice depends on the text alone.
 */
export function fullTextQueryTerms(query: string, maxTerms = FULL_TEXT_MAX_TERMS): FullTextQueryTerms {
  const lower = query.toLowerCase();
  // Each distinct term with where it first occurs in the text (words and Chinese bigrams alike), in tokenize's order.
  const terms: Array<{ term: string; at: number; order: number }> = [];
  const seen = new Set<string>();
  for (const token of tokenize(query)) {
    const term = token.replace(NOT_LEXEME, '');
    if (!term || seen.has(term)) continue;
    seen.add(term);
    const at = lower.indexOf(token);
    terms.push({ term, at: at < 0 ? lower.length : at, order: terms.length });
  }
  const kept =
    terms.length <= maxTerms
      ? terms
      : [...terms]
          .sort((a, b) => a.at - b.at || a.order - b.order)
          .slice(0, maxTerms)
          .sort((a, b) => a.order - b.order);
  return { lexemes: kept.map(({ term }) => `'${term}'`), total: terms.length, dropped: terms.length - kept.length };
}

export interface TranslatedFullTextQuery {
  /** Every word of the question through one of its translations: the groups AND-ed. */
  all: string;
  /** Any translation of any word. */
  any: string;
  /** Lexemes kept, over all groups. */
  terms: number;
}

const LATIN_WORD = /^[a-z]+$/;

/**
 * A translation as a tsquery term, matched the way the index writes the
 * documents (unstemmed `tokenize` tokens): an English word by the stem it
 * shares with its inflections ("controls", "parental" for control, parent),
 * a longer Chinese word by all of its bigrams (保修期: 保修 & 修期).
 */
function translationTerm(translation: string): { term: string; lexemes: number } | null {
  const word = translation.toLowerCase().replace(NOT_LEXEME, '');
  if (!word) return null;
  if (LATIN_WORD.test(word)) {
    // The Porter stem as such: the lemma of an irregular form (see matchKey) need not share its spelling ("strata", "stratum").
    const stem = stemmer(word);
    let shared = 0;
    while (shared < word.length && word[shared] === stem[shared]) shared += 1;
    const prefix = shared >= 4 ? word.slice(0, shared) : word;
    return { term: prefix.length >= 3 ? `'${prefix}':*` : `'${prefix}'`, lexemes: 1 };
  }
  if (!containsCjk(word) || word.length <= 2) return { term: `'${word}'`, lexemes: 1 };
  const bigrams = [...new Set(Array.from({ length: word.length - 1 }, (_, i) => word.slice(i, i + 2)))];
  return { term: `(${bigrams.map((bigram) => `'${bigram}'`).join(' & ')})`, lexemes: bigrams.length };
}

/**
 * The full-text query of a question's words in the other language (one
 * list of translations per word, see common/topic-words): each word as any
 * of its translations, at most `maxTerms` lexemes in all: every word's
 * first translation, then every word's second…, so that a word's rarer
 * senses are left out before another word is; null without a term.
 */
export function translatedFullTextQuery(words: readonly string[][], maxTerms = FULL_TEXT_MAX_TERMS): TranslatedFullTextQuery | null {
  const kept: Array<Set<string>> = words.map(() => new Set());
  let terms = 0;
  const longest = Math.max(0, ...words.map((translations) => translations.length));
  for (let sense = 0; sense < longest; sense += 1) {
    words.forEach((translations, i) => {
      const term = sense < translations.length ? translationTerm(translations[sense]) : null;
      if (!term || kept[i].has(term.term) || terms + term.lexemes > maxTerms) return;
      kept[i].add(term.term);
      terms += term.lexemes;
    });
  }
  const groups = kept.filter((group) => group.size > 0).map((group) => [...group]);
  if (groups.length === 0) return null;
  const all = groups.map((group) => (group.length > 1 ? `(${group.join(' | ')})` : group[0])).join(' & ');
  // One word: any of its translations is what `all` asks already.
  return { all, any: groups.length > 1 ? groups.flat().join(' | ') : all, terms };
}
