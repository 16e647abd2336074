/** Text helpers that treat Chinese and English alike. */
import { HAN, wordSegments } from './segments.js';

/**
 * The version of `tokenize`: the knowledge base records it with every leaf it
 * indexes (full-text vectors and the local embeddings are built from these
 * tokens). Change it whenever `tokenize` would cut any text differently.
 * Segmenting long texts in pieces (common/segments) left it as it was: the
 * pieces cut every text as before, but for a run of 1 000 characters with no
 * space or punctuation mark (no word), which is cut where the piece is full.
 */
export const TOKENIZER_VERSION = 'segmenter-cjk-bigram-1';

const STOPWORDS = new Set([
  'the',
  'a',
  'an',
  'is',
  'are',
  'was',
  'were',
  'be',
  'to',
  'of',
  'in',
  'on',
  'for',
  'and',
  'or',
  'what',
  'how',
  'which',
  'who',
  'when',
  'where',
  'why',
  'do',
  'does',
  'did',
  'can',
  'could',
  'i',
  'you',
  'me',
  'my',
  'your',
  'it',
  'this',
  'that',
  'with',
  'about',
  'tell',
  'please',
  'there',
  'any',
  'at',
  'by',
  'as',
  'from',
  'will',
  'would',
  '的',
  '了',
  '是',
  '吗',
  '呢',
  '吧',
  '啊',
  '么',
  '什么',
  '怎么',
  '怎样',
  '如何',
  '多少',
  '哪些',
  '哪个',
  '请问',
  '我',
  '你',
  '我们',
  '有',
  '在',
  '和',
  '与',
  '及',
  '或',
  '一个',
  '这个',
  '那个',
  '请',
  '告诉',
  '一下',
  '可以',
  '能',
  '会',
  '要',
]);

const CLITIC = /^([\p{L}\p{M}]+)['’](?:s|re|ve|ll|d|m)$/iu;
/** A clitic the segmenter cuts from a word with digits (X1|'|s). */
const LONE_CLITIC = /^(?:s|re|ve|ll)$/;

/** A word without its English clitic ("node's", "node’s" → "node"; "they're" → "they"); "n't" is no clitic, it negates. */
export function withoutClitic(word: string): string {
  return CLITIC.exec(word)?.[1] ?? word;
}

/**
 * Whether a token of `tokenize` is a stopword contracted with a clitic ("what's", "it's", "I'm"), or a clitic the
 * segmenter cut from a word with digits (the "s" of "X1's"): it names nothing.
 * `tokenize` keeps such tokens, as the search index was built with them (see TOKENIZER_VERSION); what compares words
 * (match keys, the local rerank) leaves them out.
 */
export function isContractedStopword(token: string): boolean {
  if (LONE_CLITIC.test(token)) return true;
  const word = withoutClitic(token);
  return word !== token && STOPWORDS.has(word.toLowerCase());
}

export function containsCjk(text: string): boolean {
  return HAN.test(text);
}

const CHINESE_CHARACTER = /[\u3400-\u9fff]/g;

/** The Chinese characters of a text, in order, repeats and all. */
export function chineseCharacters(text: string): string[] {
  return text.match(CHINESE_CHARACTER) ?? [];
}

const CJK_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/g;

/**
 * Lower-cased word tokens without stopwords or punctuation. Text is cut into
 * words by Intl.Segmenter; every run of Chinese characters also yields its
 * character bigrams, since the segmenter's dictionary may leave Chinese words
 * cut into single characters.
 */
export function tokenize(text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  for (const { segment, isWordLike } of wordSegments(lower)) {
    if (!isWordLike) continue;
    const word = segment.trim();
    if (word && !STOPWORDS.has(word)) out.push(word);
  }
  // Each bigram once, and none that is already a word: checked against a set, as a search of the list grows with the
  // square of the text's length (40 000 characters took 1.4 s).
  const present = new Set(out);
  for (const run of lower.match(CJK_RUN) ?? []) {
    for (let i = 0; i + 2 <= run.length; i += 1) {
      const bigram = run.slice(i, i + 2);
      if (!STOPWORDS.has(bigram) && !present.has(bigram)) {
        present.add(bigram);
        out.push(bigram);
      }
    }
  }
  return out;
}

/**
 * The words of a text as it writes them (case kept), without stopwords and
 * punctuation, each once, in order: what a person would read as its key
 * words. Unlike `tokenize`, no character bigrams; Chinese characters that
 * the segmenter's dictionary leaves single are joined to their single
 * neighbours (退|货 → 退货, 路|由|器 → 路由器), and a character left alone
 * is left out.
 */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (written: string) => {
    const word = withoutClitic(written);
    const key = word.toLowerCase();
    if (word && !STOPWORDS.has(key) && !seen.has(key)) {
      seen.add(key);
      out.push(word);
    }
  };
  let singles = '';
  const endSingles = () => {
    if (singles.length > 1) add(singles);
    singles = '';
  };
  for (const { segment, isWordLike } of wordSegments(text)) {
    const word = segment.trim();
    if (isWordLike && /^[\u3400-\u9fff\uf900-\ufaff]$/.test(word) && !STOPWORDS.has(word)) {
      singles += word;
      continue;
    }
    endSingles();
    if (isWordLike) add(word);
  }
  endSingles();
  return out;
}

/** Sentences of a text, keeping their closing punctuation (。！？.!? and line breaks). */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[。！？!?；;])|(?<=\.)(?=\s)|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 1);
}

/** Cuts to at most `max` characters on a character boundary, adding an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
