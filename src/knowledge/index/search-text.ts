import { tokenize } from '../../common/text.js';

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
