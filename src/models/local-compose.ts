import { matchKey, matchKeys, wordKeys } from '../common/match-keys.js';
import { questionParts } from '../common/question-parts.js';
import { sentencesOf } from '../common/sentences.js';
import { translatedUnits } from '../common/bilingual-units.js';
import { chineseWordsOf, chineseWordsOfKey, englishKeysOf, holdsTranslation, translatedKeys } from '../common/glossary.js';
import { clip, containsCjk, contentWords, tokenize } from '../common/text.js';
import { isFunctionWordKey } from '../common/function-words.js';
import { durationKeys, withoutDurationNumbers } from '../common/durations.js';
import { inverseDocumentFrequency } from '../common/inverse-frequency.js';
import { AMOUNT_KIND, ANSWER_KINDS, CONDITION_ASKS, CONTENTS_KIND, CONTENTS_VERBS } from './local-answer-kinds.js';
import { passageSentencesWithHeadings } from './local-passage-text.js';

/**
 * Extractive answers for the offline model: the sentences of the tool's
 * passages that answer the question, best first, each cited.
 */

export interface Passage {
  source: string;
  page?: number | null;
  text: string;
}

/** At most this many sentences answer one question; a question of more parts gets one more per part beyond the second. */
const MAX_SENTENCES = 3;
/** A sentence that is not the best for its part joins the answer when it scores at least this share of the best. */
const SUPPORT_SHARE = 0.75;
/** What a question term found only in the headings above a sentence counts, against one found in the sentence. */
const HEADING_SHARE = 0.5;
/** What a Chinese character of the question counts (see QuestionPart.characters), against a word. */
const CHARACTER_SHARE = 0.25;
/** What an English function word of the question ("under", "have", "until") counts, against a word that names something. */
const FUNCTION_WORD_SHARE = 0.1;
/** What a duration of the question ("a year") counts, found in a sentence in any unit ("12 个月"), against a word. */
const DURATION_SHARE = 1;
/** What a Chinese character bigram that is not a word of the question counts, against a word. */
const BIGRAM_SHARE = 0.5;
/** What a unit translated from the question's language (秒 → seconds) counts, against a word of the question. */
const TRANSLATED_SHARE = 0.25;
/**
 * What an English word of the question found in a Chinese sentence through the glossary counts, against one found as
 * written: half, since a translation may be a sense the question does not mean ("goods" for 产品, which "Is the X1 a
 * good router?" does not mean), and a sentence in the other language that holds the question's words only through
 * translations then joins the answer only where it holds more of them.
 */
const GLOSSARY_SHARE = 0.5;
/**
 * What a Chinese word of the question found in an English sentence through the glossary counts, and a unit of a Chinese
 * question (天 → days) found among a Chinese sentence's translations: less, since a Chinese word has up to 16 English
 * words of its glosses and more of ECDICT's, most of them senses the question does not mean (积分: points, credit, integral…).
 */
const TRANSLATED_WORD_SHARE = 0.25;
/** What a sentence counts that, like its document, names none of the question's model names, where other documents are named for one (see nameFactor). */
const NAMELESS_SHARE = 0.5;
/** BM25's length normalisation of a sentence's score: how much its length counts (0 not at all, 1 fully), and how soon a term's weight saturates. */
const LENGTH_WEIGHT = 0.5;
const SATURATION = 1.2;

function citation(passage: Passage): string {
  return passage.page ? `[${passage.source} p.${passage.page}]` : `[${passage.source}]`;
}

const CJK_CHARACTER = /[\u3400-\u9fff]/g;
const chineseWordSegmenter = new Intl.Segmenter('zh', { granularity: 'word' });

interface Candidate {
  text: string;
  /** Written in Chinese (else in English). */
  chinese: boolean;
  passage: Passage;
  /** The passage's place in the retrieval's ranking. */
  rank: number;
  /** Document order: the passage's rank, then the sentence's place in it. */
  order: number;
  keys: Set<string>;
  /** The English keys its Chinese words translate to (see common/glossary), for an English question. */
  translatedKeys: Set<string>;
  /** The keys of the headings above it in its passage and of its document's name. */
  headingKeys: Set<string>;
  /** Its Chinese characters, for the question's words that no sentence holds whole. */
  characters: Set<string>;
  /** How many distinct words it has: a long sentence holds a question's terms by chance more often than a short one. */
  length: number;
}

/** A part of the question: its terms, each with its weight, and what it asks for beyond them. */
interface QuestionPart {
  /** Asked in Chinese (else in English). */
  chinese: boolean;
  terms: Map<string, number>;
  /**
   * The Chinese words that translate each English term, from its words as the question writes them, as the rerank and
   * the rewrites read them: "officer" is 官员, 公务员…, not 办公室 as "office", the commoner word of its stem.
   */
  translationsOfTerm: Map<string, readonly string[]>;
  /** Each Chinese word of the part that the glossary translates, as its English keys: for English sentences. */
  translatedWords: string[][];
  /** The characters of its Chinese words that no sentence holds whole ("摔坏" of 摔落, "转给" of 转让给), and of its one-character words. */
  characters: Set<string>;
  kinds: RegExp[];
}

/** "How long", "how much"…: their second word asks (ANSWER_KINDS), it names nothing a sentence should hold. */
const ASKING_PHRASE = /\bhow (?:long|much|many|soon|often|far|big|large|heavy|tall|wide|old|hot|cold|warm)\b/gi;
/**
 * Chinese words that ask (多久, 几天, 什么, 哪个…): like ASKING_PHRASE, they name nothing a sentence should hold, and
 * the character bigrams across them and their neighbours (天内 of 几天|内) are no words of the question. The unit one
 * asks for is read from it still, among the English words of a Chinese question's units (see translatedUnits).
 */
const CHINESE_ASKING = /多长时间|多久|多长|多少|几(?:秒|分钟|小时|天|周|个月|月|年|个|次|点|种|位)?|什么|哪(?:个|些|里|儿|种|位)?|怎么|怎样|如何|为什么|是否|能否/g;

/** The text without its Chinese words that ask: matches of CHINESE_ASKING that begin and end where the segmenter cuts words (not the 几 of 茶几). */
function withoutAskingWords(text: string): string {
  const bounds = new Set([0, text.length]);
  for (const { index, segment } of chineseWordSegmenter.segment(text)) bounds.add(index).add(index + segment.length);
  return text.replace(CHINESE_ASKING, (match: string, offset: number) => (bounds.has(offset) && bounds.has(offset + match.length) ? ' ' : match));
}

/**
 * The character bigrams of a text that straddle two words of the
 * segmenter's dictionary (分可 in 积分|可以): two words found whole say the
 * bigram across them is no word. A bigram next to a single character may be
 * one (the dictionary misses 转给 in 转|给).
 */
function straddlingBigrams(text: string): Set<string> {
  const segments = [...chineseWordSegmenter.segment(text.toLowerCase())].map(({ segment }) => segment);
  const straddling = new Set<string>();
  for (let i = 0; i + 1 < segments.length; i += 1) {
    const [left, right] = [segments[i], segments[i + 1]];
    if (left.length >= 2 && right.length >= 2 && containsCjk(left.at(-1)!) && containsCjk(right[0])) straddling.add(left.at(-1)! + right[0]);
  }
  return straddling;
}

/** A part of the question; `idf` has the keys the candidate sentences hold. */
function questionPart(part: string, idf: ReadonlyMap<string, number>): QuestionPart {
  // A yes/no question's A不A ("能不能", "是不是") asks whether; it denies nothing.
  const asked = part.replace(/(\p{Script=Han})不\1/gu, '$1');
  const phrased = (CONTENTS_KIND.asks.test(asked) ? asked.replace(CONTENTS_VERBS, ' ') : asked).replace(ASKING_PHRASE, 'how').replace(CONDITION_ASKS, ' ');
  const named = withoutAskingWords(phrased);
  // A span of time is matched by its key, in any unit ("一年" for "12 个月"), not also by its number ("一年" as a bigram);
  // not in a question that asks for an amount, which names its span as the amount's frame ("spend in a year"): a
  // sentence that states the span alone ("a one-year warranty") does not answer it.
  const spans = AMOUNT_KIND.asks.test(asked) ? new Set<string>() : durationKeys(named);
  const spanless = spans.size > 0 ? withoutDurationNumbers(named) : named;
  const words = wordKeys(spanless);
  const straddling = straddlingBigrams(spanless);
  const terms = new Map<string, number>();
  const characters = new Set<string>();
  for (const key of matchKeys(spanless)) {
    // A Chinese word of one character ("后", "内") is matched as a character (see relevance); the bigrams around it carry more.
    if (/^[\u3400-\u9fff]$/.test(key)) characters.add(key);
    else if (words.has(key)) terms.set(key, isFunctionWordKey(key) ? FUNCTION_WORD_SHARE : 1);
    else if (!straddling.has(key)) terms.set(key, BIGRAM_SHARE);
  }
  for (const word of words) if (containsCjk(word) && !idf.has(word)) for (const character of word.match(CJK_CHARACTER) ?? []) characters.add(character);
  for (const key of spans) terms.set(key, DURATION_SHARE);
  // The unit a Chinese question asks for (几点, 几秒) is a word the English sentence that answers holds ("local time", "10 seconds").
  const translated = translatedUnits(phrased);
  for (const key of translated.keys) if (!terms.has(key)) terms.set(key, TRANSLATED_SHARE);
  for (const character of translated.characters) characters.add(character);
  // Words as a reader would cut them (出|厂 → 出厂), for the glossary.
  const translatedWords = contentWords(spanless).flatMap((word) => {
    const translations = containsCjk(word) ? englishKeysOf(word) : [];
    return translations.length > 0 ? [[...translations]] : [];
  });
  const translationsOfTerm = new Map<string, readonly string[]>();
  for (const token of new Set(tokenize(spanless))) {
    if (!/^[a-z]+$/.test(token)) continue;
    const key = matchKey(token);
    translationsOfTerm.set(key, [...new Set([...(translationsOfTerm.get(key) ?? []), ...chineseWordsOf(token)])]);
  }
  return {
    chinese: containsCjk(part),
    terms,
    translationsOfTerm,
    translatedWords,
    characters,
    kinds: ANSWER_KINDS.filter((kind) => kind.asks.test(asked)).map((kind) => kind.answers),
  };
}

/** A document's file name as words ("aurora-x1-router-manual.md" → "aurora x1 router manual"): it names the document's topic, as a heading above all of it would. */
function documentName(source: string): string {
  return source.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[-_.]+/g, ' ');
}

/** Sentences of the passages, without a sentence that another one holds whole (the overlap between neighbouring chunks). */
function candidatesOf(passages: Passage[]): Candidate[] {
  const all: Candidate[] = [];
  // Sentences repeat between overlapping passages, and headings stand above several sentences: each is read once.
  const keysOf = new Map<string, Set<string>>();
  // A span of time is also a key of its own, the same in any unit or language ("12 个月" and "a year").
  const keys = (text: string) => keysOf.get(text) ?? keysOf.set(text, new Set([...matchKeys(text), ...durationKeys(text)])).get(text)!;
  const noKeys = new Set<string>();
  passages.forEach((passage, rank) => {
    passageSentencesWithHeadings(passage.text).forEach((sentence, index) => {
      all.push({
        text: sentence.text,
        chinese: containsCjk(sentence.text),
        passage,
        rank,
        order: rank * 1000 + index,
        keys: keys(sentence.text),
        translatedKeys: containsCjk(sentence.text) ? translatedKeys(keys(sentence.text)) : noKeys,
        characters: new Set(sentence.text.match(CJK_CHARACTER)),
        headingKeys: keys([documentName(passage.source), ...sentence.headings].join(' ')),
        length: wordKeys(sentence.text).size,
      });
    });
  });
  const normalised = all.map((candidate) => candidate.text.replace(/\s+/g, ' ').toLowerCase());
  return all.filter((_, i) => !normalised.some((other, j) => j !== i && other.includes(normalised[i]) && (other.length > normalised[i].length || j < i)));
}

/** How rare each key is among the candidate sentences (BM25's inverse document frequency). */
function inverseFrequencies(candidates: Candidate[], keysOf: (candidate: Candidate) => Set<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const candidate of candidates) for (const key of keysOf(candidate)) counts.set(key, (counts.get(key) ?? 0) + 1);
  const n = candidates.length;
  const idf = new Map<string, number>();
  for (const [key, count] of counts) idf.set(key, inverseDocumentFrequency(n, count));
  return idf;
}

/**
 * How well a sentence answers a part of the question: the rarity of the
 * question's terms it holds (by stem; Chinese by word and bigram, and by
 * character for a word no sentence holds whole), those only in its
 * section's heading counting less. A sentence that also gives what the
 * question asks for (a duration, an amount…) scores up to one average term
 * more, and at most twice what its terms alone score. Like BM25, the score
 * is normalised by the sentence's length, a long sentence holding more
 * terms by chance; not where its headings name every word of the question,
 * which then asks for the whole section. Zero without a term of the question.
 */
function relevance(candidate: Candidate, part: QuestionPart, idf: Map<string, number>, characterIdf: Map<string, number>, rarest: number, averageLength: number): number {
  let matched = 0;
  let total = 0;
  let known = 0;
  let holdsTerm = false;
  for (const [term, weight] of part.terms) {
    const rarity = idf.get(term);
    // A term no sentence holds can still be in a heading; it adds nothing to what an average term is worth.
    if (rarity !== undefined) {
      total += weight * rarity;
      known += 1;
    }
    if (candidate.keys.has(term)) {
      matched += weight * rarity!;
      holdsTerm = true;
    } else if (
      candidate.translatedKeys.has(term) ||
      (candidate.chinese && !part.chinese && (part.translationsOfTerm.get(term) ?? chineseWordsOfKey(term)).some((word) => holdsTranslation(candidate.text, word)))
    ) {
      // Found through a translation the segmenter cut (优惠|券): a key no sentence holds, as rare as the rarest.
      matched += (part.chinese ? TRANSLATED_WORD_SHARE : GLOSSARY_SHARE) * weight * (rarity ?? rarest);
      holdsTerm = true;
    } else if (candidate.headingKeys.has(term)) matched += HEADING_SHARE * weight * (rarity ?? rarest);
  }
  // A Chinese word of the question in an English sentence: by its rarest translation the sentence holds.
  for (const translations of part.translatedWords) {
    const rarities = translations.flatMap((key) => idf.get(key) ?? []);
    if (rarities.length === 0) continue;
    const held = translations.flatMap((key) => (candidate.keys.has(key) ? [idf.get(key)!] : []));
    total += TRANSLATED_WORD_SHARE * Math.max(...rarities);
    known += 1;
    if (held.length > 0) {
      matched += TRANSLATED_WORD_SHARE * Math.max(...held);
      holdsTerm = true;
    }
  }
  if (matched === 0) return 0;
  // Characters tell apart the sentences that hold a term of the question; alone they are too weak a sign ("期" of 期限 in 保修期).
  if (holdsTerm) for (const character of part.characters) if (candidate.characters.has(character)) matched += CHARACTER_SHARE * characterIdf.get(character)!;
  const givesWhatIsAskedFor = givesWhatIsAsked(candidate, part);
  // A question that its section's headings name whole ("退货政策是什么？" under 退货与保修政策 / 退货) asks for the section:
  // its sentences in their order, however long.
  const words = [...part.terms].filter(([, weight]) => weight === 1).map(([term]) => term);
  const namesSection = words.length > 0 && words.every((term) => candidate.headingKeys.has(term));
  const lengthFactor = namesSection ? 1 : (SATURATION + 1) / (1 + SATURATION * (1 - LENGTH_WEIGHT + (LENGTH_WEIGHT * candidate.length) / averageLength));
  return lengthFactor * (matched + (givesWhatIsAskedFor ? Math.min(matched, total / Math.max(1, known)) : 0));
}

/**
 * The sentences that answer the question: for each of its parts, in the
 * order asked, the sentence that answers it best, then the sentences close
 * to that one (at least SUPPORT_SHARE of its score), at most MAX_SENTENCES
 * in all (one more per part beyond two). Ties go to the passage retrieval
 * ranked higher, then to the earlier sentence.
 */
function answeringSentences(question: string, candidates: Candidate[]): Candidate[] {
  const idf = inverseFrequencies(candidates, (candidate) => (candidate.translatedKeys.size > 0 ? new Set([...candidate.keys, ...candidate.translatedKeys]) : candidate.keys));
  const characterIdf = inverseFrequencies(candidates, (candidate) => candidate.characters);
  const rarest = Math.max(0, ...idf.values());
  const averageLength = Math.max(1, candidates.reduce((sum, candidate) => sum + candidate.length, 0) / candidates.length);
  const parts = questionParts(question).map((part) => questionPart(part, idf));
  const limit = Math.max(MAX_SENTENCES, parts.length + 1);
  const namedBySource = modelNamesBySource(candidates);
  const ranked = parts.map((part) =>
    candidates
      .map((candidate) => ({ candidate, score: relevance(candidate, part, idf, characterIdf, rarest, averageLength) * nameFactor(candidate, part, namedBySource) }))
      .filter((scored) => scored.score > 0)
      .sort((a, b) => b.score - a.score || a.candidate.rank - b.candidate.rank || a.candidate.order - b.candidate.order),
  );
  const taken = new Set<Candidate>();
  // The best sentence of each part first, so that every part is answered…
  const answers = ranked.map((scored) => {
    const best = scored.find((s) => !taken.has(s.candidate));
    if (best) taken.add(best.candidate);
    return { best, sentences: best ? [best.candidate] : [] };
  });
  // …then each part's close seconds in turn, while there is room.
  for (let round = 1; taken.size < limit && round < candidates.length; round += 1) {
    let added = false;
    answers.forEach((answer, i) => {
      const next = answer.best && ranked[i].find((s) => !taken.has(s.candidate) && s.score >= SUPPORT_SHARE * answer.best!.score);
      if (next && taken.size < limit) {
        taken.add(next.candidate);
        answer.sentences.push(next.candidate);
        added = true;
      }
    });
    if (!added) break;
  }
  // What the chosen sentences leave unanswered: one more sentence each, even beyond the limit.
  answers.forEach((answer, i) => {
    if (!answer.best) return;
    const part = parts[i];
    // The part asks for a time, a condition… (the most specific kind first), and none of its sentences gives it: the best sentence that does.
    const ungiven = part.kinds.find((answers) => !answer.sentences.some((sentence) => answers.test(sentence.text)));
    if (ungiven) {
      const giving = ranked[i].find((s) => !taken.has(s.candidate) && ungiven.test(s.candidate.text));
      if (giving) {
        taken.add(giving.candidate);
        answer.sentences.push(giving.candidate);
      }
    }
  });
  // A part that no sentence shares a term with ("…, and what gets lost?") is most likely answered by what follows the previous part's answer.
  answers.forEach((answer, i) => {
    if (answer.best || i === 0) return;
    const previous = answers[i - 1].best?.candidate;
    const next = previous && candidates.find((candidate) => candidate.passage === previous.passage && candidate.order === previous.order + 1);
    if (next && !taken.has(next)) {
      taken.add(next);
      answer.sentences.push(next);
    }
  });
  return answers.flatMap((answer) => answer.sentences);
}

/** A model number or code name: a few letters, then digits ("x1", "rt5", "gt86"); not a quantity ("5g", "100ml", "10pm"). */
const MODEL_NAME = /^[a-z]{1,4}\d{1,4}[a-z]?$/;

/**
 * A question that names a product ("X1 的固件…") is answered from what is
 * about it: where some documents are named for one of its model names (in
 * their file name or a retrieved heading), a sentence that names none of them
 * itself, in a document named for none of them, counts NAMELESS_SHARE of its
 * score. A sentence that mentions the model ("包括 Aurora X1") keeps its score.
 */
function nameFactor(candidate: Candidate, part: QuestionPart, namedBySource: ReadonlyMap<string, Set<string>>): number {
  const names = [...part.terms.keys()].filter((term) => MODEL_NAME.test(term));
  if (names.length === 0) return 1;
  const holds = (keys: Set<string> | undefined) => names.some((name) => keys?.has(name));
  if (holds(candidate.keys) || holds(namedBySource.get(candidate.passage.source)) || ![...namedBySource.values()].some(holds)) return 1;
  return NAMELESS_SHARE;
}

/** The model names each document is named for: in its file name and the headings of its retrieved passages. */
function modelNamesBySource(candidates: Candidate[]): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  for (const candidate of candidates) {
    const held = names.get(candidate.passage.source) ?? names.set(candidate.passage.source, new Set()).get(candidate.passage.source)!;
    for (const key of candidate.headingKeys) if (MODEL_NAME.test(key)) held.add(key);
  }
  return names;
}

function givesWhatIsAsked(candidate: Candidate, part: QuestionPart): boolean {
  return part.kinds.some((answers) => answers.test(candidate.text));
}

/** The sentences of the passages that answer the question, best first, each cited, with the Sources line. */
export function composeFromPassages(question: string, passages: Passage[]): string {
  const zh = containsCjk(question);
  const nothingFound = zh ? '知识库中没有找到与这个问题相关的内容。' : 'I could not find anything about this in the knowledge base.';
  const candidates = candidatesOf(passages);
  if (candidates.length === 0) return nothingFound;
  const answering = answeringSentences(question, candidates);
  // Nothing shares a term with the question: the first sentence retrieval ranked highest.
  const chosen = answering.length > 0 ? answering : candidates.slice(0, 1);
  // Chinese runs on after a citation; an English sentence keeps its space from the citation before it.
  const body = chosen.map((c, i) => `${i > 0 && (!zh || !c.chinese) ? ' ' : ''}${c.text} ${citation(c.passage)}`).join('');
  const sources = [...new Set(chosen.map((c) => c.passage.source))];
  return zh ? `根据知识库：${body}\n\n来源：${sources.join('、')}` : `According to the knowledge base: ${body}\n\nSources: ${sources.join(', ')}`;
}

/** An extractive summary: the first sentence of each line, clipped. */
export function summarizeExtractively(text: string, maxChars = 1200): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => clip(sentencesOf(line)[0] ?? line, 160));
  return clip(lines.join('\n'), maxChars);
}
