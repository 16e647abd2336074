import { tokenize } from '../common/text.js';

/** The text PostgreSQL indexes for a chunk: its tokens (words and Chinese bigrams), space-separated, for the `simple` configuration. */
export function searchDocumentText(text: string): string {
  return tokenize(text)
    .map((token) => token.replace(/[^\p{L}\p{N}_]/gu, ''))
    .filter(Boolean)
    .join(' ');
}

/** A tsquery matching any of the query's tokens, or null when it has none. */
export function searchQueryText(query: string): string | null {
  const tokens = [...new Set(tokenize(query).map((t) => t.replace(/[^\p{L}\p{N}_]/gu, '')).filter(Boolean))];
  return tokens.length ? tokens.map((t) => `'${t}'`).join(' | ') : null;
}
