import { isEnglishWord, matchKey } from './match-keys.js';
import { isFunctionWordKey } from './function-words.js';
import { CHINESE_WORD, GLOSS_STOPWORDS, loadGlossary, type Glossary } from './glossary-data.js';
import { HAN_WORD } from './segments.js';

/**
 * Look-ups in the offline Chinese–English glossary (CC-CEDICT and ECDICT, read by common/glossary-data): the English
 * words of a Chinese word or character, the Chinese words of an English word, and the words a run of characters holds.
 */

export { loadGlossary } from './glossary-data.js';

/** Whether glosses are read without this English word ("have", "take", "up"): no Chinese word translates to it. */
export function isUntranslatedWord(englishWord: string): boolean {
  return GLOSS_STOPWORDS.has(englishWord.toLowerCase());
}

/** The English words a Chinese word (two or more characters) translates to; none for a word CC-CEDICT lacks or one that asks (多久). */
export function englishWordsOf(chineseWord: string): readonly string[] {
  return loadGlossary().englishOf.get(chineseWord) ?? [];
}

/**
 * The English words of a Chinese character's first glosses (钱: "coin", "money"; 酒: "wine", "liquor"): for a
 * character a question writes alone, or in a word the glossary lacks (餐 of 餐费), which no word translates.
 */
export function englishWordsOfCharacter(character: string): readonly string[] {
  return loadGlossary().englishOfCharacter.get(character) ?? [];
}

const keysOf = new Map<string, readonly string[]>();

/** The match keys (see match-keys) of the English words of a Chinese word, or of its known pieces when the glossary lacks it whole. */
export function englishKeysOf(chineseWord: string): readonly string[] {
  let keys = keysOf.get(chineseWord);
  if (!keys) {
    const glossary = loadGlossary();
    const { englishOf } = glossary;
    keys = CHINESE_WORD.test(chineseWord) ? [...new Set(knownPieces(chineseWord, glossary).flatMap((piece) => (englishOf.get(piece) ?? []).map(matchKey)))] : [];
    if (keysOf.size >= 20_000) keysOf.clear();
    keysOf.set(chineseWord, keys);
  }
  return keys;
}

/** The Chinese words that translate an English word (compared by match key). */
export function chineseWordsOf(englishWord: string): readonly string[] {
  const word = englishWord.toLowerCase();
  return loadGlossary().chineseOfWord.get(word) ?? chineseWordsOfKey(matchKey(word));
}

/**
 * Whether an English word has translations of its own beside those of the commoner word read for its stem
 * ("allowance": 津贴, beside "allow": 允许, 许可): it is then found in Chinese text only by them, since a Chinese word
 * that translates to its stem translates the other word (许可 is no allowance).
 */
export function hasOwnTranslations(englishWord: string): boolean {
  return loadGlossary().chineseOfWord.has(englishWord.toLowerCase());
}

/**
 * Whether a Chinese text holds an English word: by one of the word's translations, or, for a word without
 * translations of its own (see hasOwnTranslations), by a Chinese word of the text that translates to its stem;
 * `translated` is the translatedKeys of the text's tokens.
 */
export function holdsEnglishWord(text: string, translated: ReadonlySet<string>, englishWord: string): boolean {
  const word = englishWord.toLowerCase();
  if (!isEnglishWord(word)) return false;
  if (!hasOwnTranslations(word) && translated.has(matchKey(word))) return true;
  return chineseWordsOf(word).some((translation) => holdsTranslation(text, translation));
}

/**
 * ECDICT's first translations of an English word (by its spelling, else those of the commonest word of its stem): the
 * senses a reader means by it, not the rare words whose CC-CEDICT gloss names it ("refund": 退还, "to return").
 */
export function commonTranslationsOf(englishWord: string): readonly string[] {
  const { ecdictOf } = loadGlossary();
  const word = englishWord.toLowerCase();
  return ecdictOf.get(word) ?? ecdictOf.get(`⟨stem⟩${matchKey(word)}`) ?? [];
}

/** The Chinese words that translate an English word given as its match key (see match-keys). */
export function chineseWordsOfKey(key: string): readonly string[] {
  return loadGlossary().chineseOf.get(key) ?? [];
}

const unitPatterns = new Map<string, RegExp>();

/**
 * Whether a Chinese text holds a translation: one of two or more characters
 * anywhere in it (the segmenter may cut it: 优惠|券); one of one character
 * only as a unit after a number (元 of "1 元", 天 of "30 天"), since the
 * segmenter leaves the characters of words it does not know single (路|由|器),
 * and a single character is part of many words (包 of 包括).
 */
export function holdsTranslation(text: string, translation: string): boolean {
  if (translation.length > 1) return text.includes(translation);
  let unit = unitPatterns.get(translation);
  if (!unit) {
    // Translations are Han characters only: nothing to escape.
    unit = new RegExp(`[0-9０-９零〇一二两三四五六七八九十百千万][ \\t]{0,3}个?${translation}`);
    if (unitPatterns.size >= 1_000) unitPatterns.clear();
    unitPatterns.set(translation, unit);
  }
  return unit.test(text);
}

/** The English match keys of the Chinese words among `tokens` (tokenize's words and bigrams), each once. */
export function translatedKeys(tokens: Iterable<string>): Set<string> {
  const keys = new Set<string>();
  for (const token of tokens) if (CHINESE_WORD.test(token)) for (const key of englishKeysOf(token)) keys.add(key);
  return keys;
}

/** The Chinese words (and bigrams) of two or more characters among `tokens`, by the English keys they translate to. */
export function chineseWordsByEnglishKey(tokens: Iterable<string>): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const token of tokens) {
    if (!CHINESE_WORD.test(token)) continue;
    for (const key of englishKeysOf(token)) (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(token);
  }
  return byKey;
}

/**
 * The English keys by which a text whose Chinese words are `byKey` (see chineseWordsByEnglishKey) holds another word
 * for a Chinese word: one that translates to the same English word, not a function word ("that"), and shares a
 * character with it (进水 for 泡水: "water"; 图片 for 照片: "photograph"); none that translates to `notTranslating`.
 * Empty where it holds none. Two words' translations meet in one of their many senses by chance; sharing a character
 * as well, the two words more often say one thing two ways, though not always (更新 "to update" and 更换 "to replace"
 * share "replace"; 以上 "above" and 以下 "below" share "level"): the callers count such a word as a translation, at its
 * share, and look for none of a function word.
 */
export function keysOfAnotherWordFor(chineseWord: string, byKey: ReadonlyMap<string, readonly string[]>, notTranslating?: string): string[] {
  return englishKeysOf(chineseWord).filter(
    (key) =>
      !isFunctionWordKey(key) &&
      byKey.get(key)?.some((word) => word !== chineseWord && sharesCharacter(word, chineseWord) && (notTranslating === undefined || !englishKeysOf(word).includes(notTranslating))),
  );
}

function sharesCharacter(a: string, b: string): boolean {
  for (const character of a) if (b.includes(character)) return true;
  return false;
}

/**
 * A Chinese word as the glossary knows it: whole, or else as its longest
 * known pieces from the left (报销单 → 报销; 开机完成后 → 开机, 完成).
 */
function knownPieces(word: string, glossary: Glossary): string[] {
  if (glossary.englishOf.has(word)) return [word];
  return piecesFromLeft(word, glossary).map(({ word: piece }) => piece);
}

/** The longest words of two or more characters the glossary knows in a run of Chinese characters, from the left, each with where it starts. */
function piecesFromLeft(run: string, { englishOf, longestByOpening: longest }: Glossary): Array<{ word: string; start: number }> {
  const pieces: Array<{ word: string; start: number }> = [];
  for (let start = 0; start < run.length - 1;) {
    // No piece is longer than the longest known word that opens with its two characters, and most places open none: a
    // long run of characters costs its length times that, not its cube.
    let end = Math.min(run.length, start + (longest.get(run.slice(start, start + 2)) ?? 0));
    while (end - start >= 2 && !englishOf.has(run.slice(start, end))) end -= 1;
    if (end - start >= 2) {
      pieces.push({ word: run.slice(start, end), start });
      start = end;
    } else start += 1;
  }
  return pieces;
}

/**
 * The words the glossary knows in a run of Chinese characters that the segmenter left single (保|修 → 保修, 路|由|器|找
 * → 路由器): its dictionary lacks words CC-CEDICT has. The longest known words from the left, each with where it starts.
 */
export function glossaryWordsIn(run: string): Array<{ word: string; start: number }> {
  return CHINESE_WORD.test(run) ? piecesFromLeft(run, loadGlossary()) : [];
}

/**
 * The runs of Chinese characters that the segmenter left single or cut as words the glossary lacks (保|修, 路|由|器,
 * 定|做的), each with where it starts in the text: there its dictionary lacks words CC-CEDICT has. `wordsOfText` are
 * the segmenter's words of one text, in order.
 */
export function segmenterGaps(wordsOfText: Iterable<Intl.SegmentData>): Array<{ run: string; start: number }> {
  const gaps: Array<{ run: string; start: number }> = [];
  let run = '';
  let start = 0;
  for (const { segment, index, isWordLike } of wordsOfText) {
    if (isWordLike && HAN_WORD.test(segment) && (segment.length === 1 || englishWordsOf(segment).length === 0)) {
      if (run.length === 0) start = index;
      run += segment;
      continue;
    }
    if (run.length > 0) gaps.push({ run, start });
    run = '';
  }
  if (run.length > 0) gaps.push({ run, start });
  return gaps;
}

/**
 * Key words in the other language, for a search: the English words of
 * Chinese words, or the Chinese words of English words, each once, in the
 * words' order; empty when the glossary knows none. The caller passes the
 * words that name what is asked about, not those that ask.
 */
export function translateForSearch(words: readonly string[], max = Infinity): string[] {
  const lists = translationsForSearch(words);
  // At most `max`: every word's first translation, then every word's second…, so that one word's rarer senses do not
  // crowd out another word; given in the words' order.
  const kept = new Set<string>();
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let sense = 0; sense < longest && kept.size < max; sense += 1) {
    for (const list of lists) if (sense < list.length && kept.size < max) kept.add(list[sense]);
  }
  return [...new Set(lists.flat().filter((translation) => kept.has(translation)))];
}

/** translateForSearch by word: one list of translations for each word the glossary knows (or piece of one), in the words' order. */
export function translationsForSearch(words: readonly string[]): string[][] {
  const glossary = loadGlossary();
  const { englishOf } = glossary;
  return words.flatMap((word) => {
    const lower = word.toLowerCase();
    // A Chinese word the glossary knows only in pieces (开机完成后 → 开机, 完成) is a word per piece.
    const lists = isEnglishWord(lower) ? [chineseWordsOf(lower)] : CHINESE_WORD.test(lower) ? knownPieces(lower, glossary).map((piece) => englishOf.get(piece) ?? []) : [];
    return lists.filter((translations) => translations.length > 0).map((translations) => [...translations]);
  });
}
