import { tokenize } from '../common/text.js';

/** The text PostgreSQL indexes for a chunk: its tokens (words and Chinese bigrams), space-separated, for the `simple` configuration. */
export function searchDocumentText(text: string): string {
  return tokenize(text)
    .map((token) => token.replace(/[^\p{L}\p{N}_]/gu, ''))
    .filter(Boolean)
    .join(' ');
}

/** The query's distinct tokens, quoted as tsquery lexemes. */
export function searchQueryTokens(query: string): string[] {
  return [...new Set(tokenize(query).map((t) => t.replace(/[^\p{L}\p{N}_]/gu, '')).filter(Boolean))].map((t) => `'${t}'`);
}
