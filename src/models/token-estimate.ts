type Tokenizer = typeof import('gpt-tokenizer');

let loading: Promise<Tokenizer> | undefined;

/** The longest piece of text the tokenizer is given at once. */
export const TOKENIZER_PIECE_LENGTH = 200;

/**
 * The o200k_base tokenizer (gpt-tokenizer), loaded on first use: about
 * 70 MB of merge tables that an instance only needs once a client asks
 * for token counts or a token limit the model cannot count itself.
 */
export function tokenizer(): Promise<Tokenizer> {
  loading ??= import('gpt-tokenizer');
  return loading;
}

/**
 * `text` in pieces of at most TOKENIZER_PIECE_LENGTH characters, each cut
 * before white space where the piece has some and never inside a surrogate
 * pair. The BPE's cost grows with the square of a word's length, so a long
 * run without spaces (Chinese, a pasted blob) would otherwise hold the event
 * loop for seconds; counting piece by piece is linear and off by at most a
 * token per cut.
 */
export function boundedPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + TOKENIZER_PIECE_LENGTH, text.length);
    if (end < text.length) {
      // Before a space: the encoding joins a space to the word after it (" word").
      let space = end;
      while (space > start + TOKENIZER_PIECE_LENGTH / 2 && !/\s/.test(text[space])) space -= 1;
      if (space > start + TOKENIZER_PIECE_LENGTH / 2) end = space;
      const code = text.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** How many tokens `text` is for the o200k_base encoding: an estimate for models that do not report their own counts. */
export async function estimateTokens(text: string): Promise<number> {
  if (text === '') return 0;
  const { countTokens } = await tokenizer();
  let total = 0;
  for (const piece of boundedPieces(text)) total += countTokens(piece);
  return total;
}

/** The first `maxTokens` tokens of `text`, and whether it was cut. */
export async function truncateToTokens(text: string, maxTokens: number): Promise<{ text: string; truncated: boolean }> {
  const { encode, decode } = await tokenizer();
  const tokens: number[] = [];
  for (const piece of boundedPieces(text)) {
    tokens.push(...encode(piece));
    if (tokens.length > maxTokens) return { text: decode(tokens.slice(0, maxTokens)), truncated: true };
  }
  return { text, truncated: false };
}
