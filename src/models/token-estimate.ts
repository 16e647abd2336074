type Tokenizer = typeof import('gpt-tokenizer');

let loading: Promise<Tokenizer> | undefined;

/**
 * The o200k_base tokenizer (gpt-tokenizer), loaded on first use: about
 * 70 MB of merge tables that an instance only needs once a client asks
 * for token counts or a token limit the model cannot count itself.
 */
export function tokenizer(): Promise<Tokenizer> {
  loading ??= import('gpt-tokenizer');
  return loading;
}

/** How many tokens `text` is for the o200k_base encoding: an estimate for models that do not report their own counts. */
export async function estimateTokens(text: string): Promise<number> {
  if (text === '') return 0;
  return (await tokenizer()).countTokens(text);
}

/** The first `maxTokens` tokens of `text`, and whether it was cut. */
export async function truncateToTokens(text: string, maxTokens: number): Promise<{ text: string; truncated: boolean }> {
  const { encode, decode } = await tokenizer();
  const tokens = encode(text);
  if (tokens.length <= maxTokens) return { text, truncated: false };
  return { text: decode(tokens.slice(0, maxTokens)), truncated: true };
}
