import { comparedTokens, isEnglishWord, matchKey, wordTokens } from '../common/match-keys.js';
import { translatedUnits, unitsOfNumbers } from '../common/bilingual-units.js';
import {
  chineseWordsOf,
  commonTranslationsOf,
  englishKeysOf,
  englishWordsOf,
  englishWordsOfCharacter,
  glossaryWordsIn,
  hasOwnTranslations,
  segmenterGaps,
} from '../common/glossary.js';
import { chineseCharacters, containsCjk, contentWords, tokenize, withoutClitic } from '../common/text.js';
import { HAN_WORD, wordSegments } from '../common/segments.js';
import { isFunctionCharacter, isFunctionWordKey } from '../common/function-words.js';
import { durationKeys, withoutDurationNumbers } from '../common/durations.js';
import { percentageKeys, withoutPercentages } from '../common/percentages.js';
import { phrasalVerbs, phraseKeys } from '../common/phrases.js';
import { AMOUNT_KIND, ANSWER_KINDS, CONDITION_ASKS, CONTENTS_KIND, CONTENTS_VERBS, namedInstanceKind, type AnswerTest } from './local-answer-kinds.js';

/**
 * How the offline model reads a question (see local-compose): its terms and
 * their weights, its words' translations, and what it asks for.
 */

/** What an English function word of the question ("under", "have", "until") counts, against a word that names something. */
const FUNCTION_WORD_SHARE = 0.1;
/** What a duration of the question ("a year") counts, found in a sentence in any unit ("12 个月"), against a word. */
const DURATION_SHARE = 1;
/** What a Chinese character bigram that is not a word of the question counts, against a word. */
const BIGRAM_SHARE = 0.5;
/**
 * What a phrase of the question (see common/phrases) counts in a sentence in the other language, against a word: half,
 * as an English word found through its translation does; a phrase has one or two translations, not a word's many senses.
 */
const PHRASE_SHARE = 0.5;
/** What a unit translated from the question's language (秒 → seconds) counts, against a word of the question. */
const TRANSLATED_SHARE = 0.25;

/** A part of the question: its terms, each with its weight, and what it asks for beyond them. */
export interface QuestionPart {
  /** Asked in Chinese (else in English). */
  chinese: boolean;
  terms: Map<string, number>;
  /**
   * The Chinese words that translate each English term, from its words as the question writes them, as the rerank and
   * the rewrites read them: "officer" is 官员, 公务员…, not 办公室 as "office", the commoner word of its stem.
   */
  translationsOfTerm: Map<string, readonly string[]>;
  /** Of those, ECDICT's first translations of its words (see commonTranslationsOf): the senses a reader means. */
  commonTranslationsOfTerm: Map<string, readonly string[]>;
  /** The English terms whose words have translations of their own (see hasOwnTranslations): found in a Chinese sentence only by those. */
  ownTranslationTerms: Set<string>;
  /** Each Chinese word of the part that the glossary translates, with its English keys: for English sentences. */
  translatedWords: Array<{ word: string; keys: string[] }>;
  /** Each character of a Chinese part that no word the glossary knows covers (钱, 餐 of 餐费), with its glosses' English keys (see singleCharacterRuns). */
  translatedCharacters: Array<{ character: string; keys: string[] }>;
  /**
   * The Chinese words of a Chinese part that no sentence holds and the glossary knows whole, not function words (以上
   * "above" is no 以下 "below", though both translate to "level"): a Chinese sentence may say them in other words (进水
   * for 泡水, see keysOfAnotherWordFor). At most MOST_PIVOT_WORDS.
   */
  pivotWords: string[];
  /**
   * The units its numbers are counted in, by the number as written (a number's match key), for the numbers it writes with a unit only ("5000
   * 积分"): the same number in another unit is another amount (see local-relevance).
   */
  unitsOfNumber: Map<string, Set<string>>;
  /** Its verbs said with a particle ("turn off"), by their match keys, each with its particle: see local-relevance's PHRASAL_VERB_ALONE_SHARE. */
  particleOfVerb: Map<string, string>;
  /** The characters of its Chinese words that no sentence holds whole ("摔坏" of 摔落, "转给" of 转让给), and of its one-character words. */
  characters: Set<string>;
  /** What it asks for beyond its terms (a duration, a named one of something…), most specific first. */
  kinds: AnswerTest[];
}

/** "How long", "how much"…: their second word asks (ANSWER_KINDS), it names nothing a sentence should hold. */
const ASKING_PHRASE = /\bhow (?:long|much|many|soon|often|far|big|large|heavy|tall|wide|old|hot|cold|warm)\b/gi;
/**
 * The unit a "how many" asks for ("how many days"): what the answer gives, not what it is about, so it counts as a
 * Chinese question's 几天 counts "days" (TRANSLATED_SHARE); in full it put "Submit expense reports within 30 days…"
 * first for "Within how many days can I exchange a faulty product?".
 */
const ASKED_UNIT = /\bhow many (seconds|minutes|hours|days|weeks|months|years)\b/gi;
/**
 * The same after 多少 or 几 where the segmenter keeps the unit apart from them, with a "within" (多少|天内, 几个|工作|日内):
 * 天内 counted in full put "签收后 15 天内出现性能故障…" first for "报销单回来后多少天内要交？". Every word of the
 * segmenter's within the unit counts as the unit.
 */
const CHINESE_ASKED_UNIT = /(?:多少|几)(个?(?:秒|分钟|小时|天|日|周|星期|月|年|工作日)(?:以内|之内|内)?)/g;

/** The words of the segmenter that lie within the units a Chinese question asks for (see CHINESE_ASKED_UNIT). */
function chineseAskedUnitWords(text: string): string[] {
  // The spans in order, apart from one another; the words are walked beside them once.
  const spans = [...text.matchAll(CHINESE_ASKED_UNIT)].map((match) => [match.index! + match[0].length - match[1].length, match.index! + match[0].length]);
  const words: string[] = [];
  if (spans.length === 0) return words;
  let next = 0;
  for (const { index, segment } of wordSegments(text)) {
    while (next < spans.length && spans[next][1] <= index) next += 1;
    if (next === spans.length) break;
    if (index >= spans[next][0] && index + segment.length <= spans[next][1]) words.push(segment);
  }
  return words;
}

/**
 * Chinese words that ask (多久, 几天, 什么, 哪个…): like ASKING_PHRASE, they name nothing a sentence should hold, and
 * the character bigrams across them and their neighbours (天内 of 几天|内) are no words of the question. The unit one
 * asks for is read from it still, among the English words of a Chinese question's units (see translatedUnits).
 */
const CHINESE_ASKING = /什么时候|多会儿|多长时间|多久|多长|多少|几(?:秒|分钟|小时|天|周|个月|月|年|个|次|点|种|位)?|什么|哪(?:个|些|里|儿|种|位)?|怎么|怎样|如何|为什么|是否|能否/g;

/** The text without its Chinese words that ask: matches of CHINESE_ASKING that begin and end where the segmenter cuts words (not the 几 of 茶几). */
function withoutAskingWords(text: string): string {
  const bounds = new Set([0, text.length]);
  for (const { index, segment } of wordSegments(text)) bounds.add(index).add(index + segment.length);
  return text.replace(CHINESE_ASKING, (match: string, offset: number) => (bounds.has(offset) && bounds.has(offset + match.length) ? ' ' : match));
}

/**
 * The character bigrams of a text (given as its words) that straddle two words of the
 * segmenter's dictionary (分可 in 积分|可以): two words found whole say the
 * bigram across them is no word. A bigram next to a single character may be
 * one (the dictionary misses 转给 in 转|给).
 */
function straddlingBigrams(wordsOfText: readonly Intl.SegmentData[]): Set<string> {
  const segments = wordsOfText.map(({ segment }) => segment);
  const straddling = new Set<string>();
  for (let i = 0; i + 1 < segments.length; i += 1) {
    const [left, right] = [segments[i], segments[i + 1]];
    if (left.length >= 2 && right.length >= 2 && containsCjk(left.at(-1)!) && containsCjk(right[0])) straddling.add(left.at(-1)! + right[0]);
  }
  return straddling;
}

/** What a Chinese question asks with, not what it asks about (怎么办, 咋回事): its characters are no loose ones. */
const ASKING_HOW = /(?:怎么|怎|咋)(?:办|样|回事)/g;

/**
 * What the glossary reads in the runs of Chinese characters that the segmenter left single (保|修, 路|由|器) or cut as
 * words the glossary lacks (餐费), read in one pass:
 * - `crossing`: the bigrams that cross the edge of a word the glossary knows there (坏了 and 还保 of
 *   摔|坏|了|还|保|修, around 摔坏 and 保修), which are no words of the question; a bigram of two characters that no
 *   known word covers may still be one, and stays;
 * - `loose`: the characters no known word covers (钱 in 报销|的|钱; 找 of 路|由|器|找; 餐 and 费 of 餐费), not those
 *   that join, point or ask (see isFunctionCharacter), each once, in order;
 * - `known`: the words the glossary knows there (路由器, 保修; 定做 of 定|做的), which are words of the question as the
 *   segmenter's are.
 */
function singleCharacterRuns(wordsOfText: readonly Intl.SegmentData[]): { crossing: Set<string>; loose: string[]; known: Set<string> } {
  const crossing = new Set<string>();
  const known = new Set<string>();
  const loose = new Set<string>();
  const text = wordsOfText[0]?.input ?? '';
  const asking = new Set<number>();
  for (const match of text.matchAll(ASKING_HOW)) for (let at = match.index; at < match.index + match[0].length; at += 1) asking.add(at);
  for (const { run, start: runStart } of segmenterGaps(wordsOfText)) {
    const pieces = glossaryWordsIn(run);
    const covered = new Array<number>(run.length).fill(-1);
    pieces.forEach(({ word, start }, i) => {
      known.add(word);
      for (let at = start; at < start + word.length; at += 1) covered[at] = i;
    });
    for (let at = 0; at + 1 < run.length; at += 1) {
      if (covered[at] !== covered[at + 1] && (covered[at] >= 0 || covered[at + 1] >= 0)) crossing.add(run.slice(at, at + 2));
    }
    [...run].forEach((character, at) => {
      if (covered[at] < 0 && !asking.has(runStart + at) && !isFunctionCharacter(character)) loose.add(character);
    });
  }
  for (const word of known) crossing.delete(word);
  return { crossing, loose: [...loose], known };
}

/** A word of Latin letters and digits joined by hyphens ("Wi-Fi", "check-in", "plug-and-play"; also U+2010 and U+2011), each part of two characters or more. */
const HYPHENATED = /(?<![\p{L}\d\-\u2010\u2011])[\p{L}\d]{2,}(?:[-\u2010\u2011][\p{L}\d]{2,})+(?![\p{L}\d\-\u2010\u2011])/gu;

/**
 * A hyphenated word names one thing, but the tokenizer splits it ("wi", "fi"): its parts that are whole terms share one
 * word's weight, or "Wi-Fi" counted twice and "…settings, including the Wi-Fi password, are erased" outranked "…the
 * setup wizard to name your network" for "Where do I name my Wi-Fi network?". A part the question also writes on its
 * own keeps its weight; a part of two such words takes the smaller share, whichever comes first.
 */
function sharedByHyphenatedParts(text: string, terms: Map<string, number>): void {
  const compounds = text.match(HYPHENATED) ?? [];
  if (compounds.length === 0) return;
  const alone = new Set(comparedTokens(tokenize(text.replace(HYPHENATED, ' '))).map(matchKey));
  const shares = new Map<string, number>();
  for (const compound of compounds) {
    const parts = [...new Set(comparedTokens(tokenize(compound)).map(matchKey))].filter((key) => terms.get(key) === 1 && !alone.has(key));
    for (const key of parts) shares.set(key, Math.min(shares.get(key) ?? 1, 1 / parts.length));
  }
  for (const [key, share] of shares) terms.set(key, share);
}

/** Whether the sentences hold each bigram of a word of three or more characters (路由, 由器 of 路由器): they hold the word, as far as bigrams tell. */
function heldByBigrams(word: string, idf: ReadonlyMap<string, number>): boolean {
  if (word.length < 3) return false;
  for (let at = 0; at + 2 <= word.length; at += 1) if (!idf.has(word.slice(at, at + 2))) return false;
  return true;
}

/**
 * A word of three or more characters that the glossary knows where the segmenter left its characters single (路|由|器)
 * names one thing, as a two-character word does, but is found by its bigrams (路由, 由器): they share one bigram's
 * weight. Each at a bigram's weight, 路由器 counted twice what 进水 did, and "路由器类产品…保修两年" outranked the
 * sentence on water damage for "路由器进水了保修吗？". A bigram that is a word of its own there keeps its weight.
 */
function sharedByGlossaryWordBigrams(glossaryWords: ReadonlySet<string>, terms: Map<string, number>): void {
  for (const word of glossaryWords) {
    if (word.length < 3) continue;
    const share = BIGRAM_SHARE / (word.length - 1);
    for (let at = 0; at + 2 <= word.length; at += 1) {
      const bigram = word.slice(at, at + 2);
      if (!glossaryWords.has(bigram) && terms.get(bigram) === BIGRAM_SHARE) terms.set(bigram, share);
    }
  }
}

/**
 * The characters of the glossary's words of three or more characters in the segmenter's gaps (see singleCharacterRuns)
 * that the sentences hold by their bigrams (路|由|器 of 路由器), where the text writes them nowhere else: no one-character
 * words of the question, whose word its bigrams already find. Each counted as a character too, 路由器 counted five times
 * over in "路由器类产品…保修两年", which outranked "进水、摔落…造成的损坏不在保修范围内" for "路由器摔坏了保修吗？".
 */
function charactersOfHeldGlossaryWords(text: string, glossaryWords: Iterable<string>, idf: ReadonlyMap<string, number>): Set<string> {
  const inHeldWords = new Map<string, number>();
  for (const word of glossaryWords) {
    if (!heldByBigrams(word, idf)) continue;
    const times = text.split(word).length - 1;
    for (const character of word) inHeldWords.set(character, (inHeldWords.get(character) ?? 0) + times);
  }
  const held = new Set<string>();
  for (const [character, times] of inHeldWords) if (text.split(character).length - 1 <= times) held.add(character);
  return held;
}

/**
 * Reader's words with two neighbours joined where the glossary knows them as one word the segmenter cut (就寝|时间 →
 * 就寝时间, "bedtime"): the compound means what its pieces' translations do not (就寝: sleep, bed; 时间: time).
 */
function withCompoundsJoined(words: string[], text: string): string[] {
  const joined: string[] = [];
  for (let i = 0; i < words.length; i += 1) {
    const compound = words[i] + (words[i + 1] ?? '');
    if (i + 1 < words.length && HAN_WORD.test(words[i]) && HAN_WORD.test(words[i + 1]) && text.includes(compound) && englishWordsOf(compound).length > 0) {
      joined.push(compound);
      i += 1;
    } else joined.push(words[i]);
  }
  return joined;
}

/** The most Chinese words of a part looked for in other words (pivotWords): a question has a few; each costs a look-up per sentence. */
const MOST_PIVOT_WORDS = 32;
/** The most characters of a part looked for by their glosses (translatedCharacters): each costs a look-up per sentence. */
const MOST_LOOSE_CHARACTERS = 32;
/** A word that negates what follows (不合格, 没关系, 无理由, 非人为, 未使用): the word within it says the opposite. */
const NEGATED_WORD = /^[不没无非未]/;
/** The longest word of the question read by the words within it: the segmenter's words are short, and the pieces of a word grow with its length's square. */
const LONGEST_WORD_READ_BY_PIECES = 8;

/**
 * The words within a Chinese word of the question that no sentence holds, which the sentences hold and the glossary
 * knows (生日 of 过生日 in "生日当月消费享受双倍积分"): the word says what they say, and more. As bigrams of the word
 * they counted half, and "12 个月内有效" came first for "过生日那个月购物积分有什么不同？" by its 个月.
 */
function innerWords(word: string, idf: ReadonlyMap<string, number>): string[] {
  const inner: string[] = [];
  for (let start = 0; start + 2 <= word.length; start += 1) {
    for (let end = start + 2; end <= word.length && end - start < word.length; end += 1) {
      const piece = word.slice(start, end);
      if (idf.has(piece) && englishWordsOf(piece).length > 0) inner.push(piece);
    }
  }
  return inner;
}

/**
 * A part of the question; `idf` has the keys the candidate sentences hold. `referent` is what a pronoun of the part
 * stands for (see partReferent): its words are the part's terms too.
 */
export function questionPart(part: string, idf: ReadonlyMap<string, number>, referent = ''): QuestionPart {
  // A yes/no question's A不A ("能不能", "是不是") asks whether; it denies nothing.
  const asked = part.replace(/(\p{Script=Han})不\1/gu, '$1');
  const phrased = (CONTENTS_KIND.asks.test(asked) ? asked.replace(CONTENTS_VERBS, ' ') : asked).replace(ASKING_PHRASE, 'how').replace(CONDITION_ASKS, ' ');
  // What a pronoun of the part stands for names what it asks about, not what it asks.
  const named = referent ? `${withoutAskingWords(phrased)} ${referent}` : withoutAskingWords(phrased);
  // A span of time is matched by its key, in any unit ("一年" for "12 个月"), not also by its number ("一年" as a bigram);
  // not in a question that asks for an amount, which names its span as the amount's frame ("spend in a year"): a
  // sentence that states the span alone ("a one-year warranty") does not answer it.
  const spans = AMOUNT_KIND.asks.test(asked) ? new Set<string>() : durationKeys(named);
  const spanless = withoutPercentages(spans.size > 0 ? withoutDurationNumbers(named) : named);
  const tokens = comparedTokens(tokenize(spanless));
  // The segmenter's words, read once for the bigrams across them and the characters it left single.
  const lowerSpanless = spanless.toLowerCase();
  const wordsOfSpanless = [...wordSegments(lowerSpanless)];
  const singleRuns = singleCharacterRuns(wordsOfSpanless);
  const words = new Set(wordTokens(spanless, tokens).map(matchKey));
  const straddling = new Set([...straddlingBigrams(wordsOfSpanless), ...singleRuns.crossing]);
  const terms = new Map<string, number>();
  const characters = new Set<string>();
  for (const key of new Set(tokens.map(matchKey))) {
    // A Chinese word of one character ("后", "内") is matched as a character (see local-relevance); the bigrams around it carry more.
    if (/^[\u3400-\u9fff]$/.test(key)) characters.add(key);
    else if (words.has(key)) terms.set(key, isFunctionWordKey(key) ? FUNCTION_WORD_SHARE : 1);
    else if (!straddling.has(key)) terms.set(key, BIGRAM_SHARE);
  }
  for (const word of words) if (containsCjk(word) && !idf.has(word)) for (const character of chineseCharacters(word)) characters.add(character);
  for (const character of charactersOfHeldGlossaryWords(lowerSpanless, singleRuns.known, idf)) characters.delete(character);
  for (const word of words) {
    if (!HAN_WORD.test(word) || word.length > LONGEST_WORD_READ_BY_PIECES || NEGATED_WORD.test(word) || idf.has(word)) continue;
    for (const inner of innerWords(word, idf)) if ((terms.get(inner) ?? 0) < 1) terms.set(inner, 1);
  }
  sharedByHyphenatedParts(spanless, terms);
  sharedByGlossaryWordBigrams(singleRuns.known, terms);
  for (const unit of [...[...asked.matchAll(ASKED_UNIT)].map((match) => match[1]), ...chineseAskedUnitWords(asked)]) {
    const key = matchKey(unit.toLowerCase());
    if (terms.get(key) === 1) terms.set(key, TRANSLATED_SHARE);
  }
  for (const key of spans) terms.set(key, DURATION_SHARE);
  for (const key of percentageKeys(named)) terms.set(key, 1);
  for (const key of phraseKeys(named)) terms.set(key, PHRASE_SHARE);
  // The unit a Chinese question asks for (几点, 几秒) is a word the English sentence that answers holds ("local time", "10 seconds").
  const translated = translatedUnits(phrased);
  for (const key of translated.keys) if (!terms.has(key)) terms.set(key, TRANSLATED_SHARE);
  for (const character of translated.characters) characters.add(character);
  // Words as a reader would cut them (出|厂 → 出厂), for the glossary.
  const readerWords = withCompoundsJoined(contentWords(spanless), spanless);
  const translatedWords = readerWords.flatMap((word) => {
    const keys = containsCjk(word) ? englishKeysOf(word) : [];
    return keys.length > 0 ? [{ word, keys: [...keys] }] : [];
  });
  const chinese = containsCjk(part);
  const translatedCharacters = chinese
    ? singleRuns.loose
        .flatMap((character) => {
          const keys = [...new Set(englishWordsOfCharacter(character).map(matchKey))].filter((key) => !isFunctionWordKey(key));
          return keys.length > 0 ? [{ character, keys }] : [];
        })
        .slice(0, MOST_LOOSE_CHARACTERS)
    : [];
  const pivotWords = chinese
    ? [...new Set([...readerWords, ...singleRuns.known])]
        .filter((word) => containsCjk(word) && !idf.has(word) && !heldByBigrams(word, idf) && !isFunctionWordKey(word) && englishWordsOf(word).length > 0)
        .slice(0, MOST_PIVOT_WORDS)
    : [];
  const translationsOfTerm = new Map<string, readonly string[]>();
  const commonTranslationsOfTerm = new Map<string, readonly string[]>();
  const spelledByStem = new Set<string>();
  for (const token of new Set(tokens.map(withoutClitic))) {
    if (!isEnglishWord(token)) continue;
    const key = matchKey(token);
    translationsOfTerm.set(key, [...new Set([...(translationsOfTerm.get(key) ?? []), ...chineseWordsOf(token)])]);
    commonTranslationsOfTerm.set(key, [...new Set([...(commonTranslationsOfTerm.get(key) ?? []), ...commonTranslationsOf(token)])]);
    if (!hasOwnTranslations(token)) spelledByStem.add(key);
  }
  const ownTranslationTerms = new Set([...translationsOfTerm.keys()].filter((key) => !spelledByStem.has(key)));
  const particleOfVerb = new Map<string, string>();
  for (const phrasal of phrasalVerbs(named, { verbsOnly: true })) {
    const [verb, particle] = phrasal.split(' ');
    if (terms.get(verb) === 1) particleOfVerb.set(verb, particle);
  }
  const unitsOfNumber = new Map<string, Set<string>>();
  for (const [number, units] of unitsOfNumbers(spanless)) if (!units.has('')) unitsOfNumber.set(number, units);
  return {
    chinese,
    terms,
    unitsOfNumber,
    particleOfVerb,
    translationsOfTerm,
    commonTranslationsOfTerm,
    ownTranslationTerms,
    translatedWords,
    translatedCharacters,
    pivotWords,
    characters,
    kinds: [...ANSWER_KINDS.filter((kind) => kind.asks.test(asked)).map((kind) => kind.answers), ...[namedInstanceKind(asked)].filter((kind) => kind !== undefined)],
  };
}
