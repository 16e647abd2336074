import { chineseWordsByEnglishKey, chineseWordsOfKey, englishKeysOf, holdsTranslation, keysOfAnotherWordFor } from '../common/glossary.js';
import { containsCjk } from '../common/text.js';
import { unitsOfNumbers } from '../common/bilingual-units.js';
import { isPhraseKey } from '../common/phrases.js';
import { broaderKeys } from '../common/hypernyms.js';
import { isFunctionWordKey } from '../common/function-words.js';
import type { QuestionPart } from './local-question.js';
import type { Candidate } from './local-candidates.js';

/**
 * How well a sentence answers a part of the question, for the offline model
 * (see local-compose): what each way of finding a term of the question
 * counts, and how a product's model names steer to the documents about it.
 */

/** What a question term found only in the headings above a sentence counts, against one found in the sentence. */
const HEADING_SHARE = 0.5;
/** What a Chinese character of the question counts (see QuestionPart.characters), against a word. */
const CHARACTER_SHARE = 0.25;
/**
 * What an English word of the question found in a Chinese sentence through the glossary counts, against one found as
 * written: half, since a translation may be a sense the question does not mean ("goods" for 产品, which "Is the X1 a
 * good router?" does not mean), and a sentence in the other language that holds the question's words only through
 * translations then joins the answer only where it holds more of them.
 */
const GLOSSARY_SHARE = 0.5;
/**
 * How much more each word of the question found through a translation counts where a sentence holds two or more of
 * them so (English words in a Chinese sentence through the glossary, Chinese words in an English one): two translations
 * that are senses the question does not mean rarely meet in one sentence. At the single share,
 * "积分不能兑换现金，也不能转让给其他账户。" (points, account) lost "Can I move my points to another account?" to "Band
 * steering … moves capable devices to 5 GHz", which holds one word as written.
 */
const SEVERAL_TRANSLATIONS_FACTOR = 1.5;
/**
 * What an English word of the question counts in an English sentence that holds a broader word for it by WordNet
 * ("alcohol" for "wine", see common/hypernyms): half, as a translation does. A rule for the class answers for its
 * kinds; a narrower word ("meals" for "food") is not counted: what holds for one kind does not answer for the class,
 * and it put "Meals during travel are reimbursed…" before the alcohol rule for "a beer I had with dinner".
 */
const BROADER_SHARE = 0.5;
/**
 * What a Chinese word of the question found in an English sentence through the glossary counts, and a unit of a Chinese
 * question (天 → days) found among a Chinese sentence's translations: less, since a Chinese word has up to 16 English
 * words of its glosses and more of ECDICT's, most of them senses the question does not mean (积分: points, credit, integral…).
 */
const TRANSLATED_WORD_SHARE = 0.25;
/** What a character of a Chinese question found in an English sentence by its glosses counts (see QuestionPart.translatedCharacters): a character has more senses than a word. */
const CHARACTER_TRANSLATION_SHARE = TRANSLATED_WORD_SHARE / 2;
/**
 * What a sentence counts that holds only the question's model names of its words, in neither the sentence nor its
 * headings any word of what is asked about: a manual names its product in sentence after sentence, and "The Aurora X1
 * broadcasts on 2.4 GHz" otherwise outranked, for "X1 的家长控制可以做什么？", the sentence on parental controls that
 * holds 控制 only through a translation.
 */
const MODEL_NAME_ONLY_SHARE = 0.5;
/**
 * What a verb the question says with a particle counts in an English sentence that holds the verb but not with that
 * particle: "turn off" is not "turn", and "…the status light turns solid green" outranked "Parental controls let you
 * pause the internet…" for "Can I turn off the internet for my son's phone?".
 */
const PHRASAL_VERB_ALONE_SHARE = 0.5;
/** What a sentence counts that, like its document, names none of the question's model names, where other documents are named for one (see nameFactor). */
const NAMELESS_SHARE = 0.5;
/**
 * How much more a sentence counts in a document named for one of the question's model names (the X2's manual) than one
 * elsewhere that names the model in passing ("路由器类产品（包括 Aurora X1）…，Aurora X2 网状路由系统保修三年。"): a
 * product's own document is its first source. That policy sentence came first for "X2 套装里有几根网线？", before
 * "…and one Ethernet cable". At 1.15, "X2 的电源线坏了保修多长时间？" lost the policy's 配件保修一年.
 */
const NAMED_DOCUMENT_FACTOR = 1.1;
/** BM25's length normalisation of a sentence's score: how much its length counts (0 not at all, 1 fully), and how soon a term's weight saturates. */
const LENGTH_WEIGHT = 0.5;
const SATURATION = 1.2;

/**
 * How well a sentence answers a part of the question: the rarity of the
 * question's terms it holds (by stem; Chinese by word and bigram, and by
 * character for a word no sentence holds whole), those only in its
 * section's heading counting less. A sentence that also gives what the
 * question asks for (a duration, an amount…) scores up to one average term
 * more, and at most twice what its terms alone score. Like BM25, the score
 * is normalised by the sentence's length, a long sentence holding more
 * terms by chance; not where its headings name every word of the question,
 * which then asks for the whole section. A sentence that holds, itself or in
 * its headings, no word of the question but its model names counts less (see
 * MODEL_NAME_ONLY_SHARE). Zero without a term of the question.
 */
export function relevance(candidate: Candidate, part: QuestionPart, idf: Map<string, number>, characterIdf: Map<string, number>, rarest: number, averageLength: number): number {
  let matched = 0;
  let total = 0;
  let known = 0;
  let holdsTerm = false;
  // Whether it holds, or its headings do, a word of the question other than a model name (see MODEL_NAME_ONLY_SHARE).
  let holdsSubject = false;
  let broader: number;
  let throughGlossary = 0;
  // For each word of the question found through the glossary, the Chinese words of the sentence that translate it.
  const glossarySources: string[][] = [];
  for (const [term, weight] of part.terms) {
    // A phrase is found by its key only in a sentence in the other language, not in a heading (which may be in either):
    // within one language its words are found as written, and a Chinese word that translates several phrases would
    // count once for each.
    const phrase = isPhraseKey(term);
    if (phrase && candidate.chinese === part.chinese) continue;
    const rarity = idf.get(term);
    // A term no sentence holds can still be in a heading; it adds nothing to what an average term is worth.
    if (rarity !== undefined) {
      total += weight * rarity;
      known += 1;
    }
    if (candidate.keys.has(term) && !countedInOtherUnits(candidate, part, term)) {
      const particle = candidate.chinese ? undefined : part.particleOfVerb.get(term);
      matched += (particle === undefined || candidate.phrasalVerbs.has(`${term} ${particle}`) ? 1 : PHRASAL_VERB_ALONE_SHARE) * weight * rarity!;
      holdsTerm = true;
      holdsSubject ||= !MODEL_NAME.test(term);
    } else if (
      (candidate.translatedKeys.has(term) && !part.ownTranslationTerms.has(term)) ||
      (candidate.chinese && !part.chinese && (part.translationsOfTerm.get(term) ?? chineseWordsOfKey(term)).some((word) => holdsTranslation(candidate.text, word)))
    ) {
      // Found through a translation the segmenter cut (优惠|券): a key no sentence holds, as rare as the rarest.
      if (part.chinese) matched += TRANSLATED_WORD_SHARE * weight * (rarity ?? rarest);
      else {
        throughGlossary += weight * (rarity ?? rarest);
        if (weight === 1) glossarySources.push(translationsHeld(candidate, term, part));
      }
      holdsTerm = true;
      holdsSubject = true;
    } else if (candidate.chinese && !part.chinese && weight === 1 && !phrase && !MODEL_NAME.test(term) && holdsSynonym(candidate, term, part)) {
      // An English word by another Chinese word for one of its translations, as a translation counts (图片 for "photo"'s
      // 照片; 消费 for "spend"'s 消耗).
      throughGlossary += rarity ?? rarest;
      holdsTerm = true;
      holdsSubject = true;
    } else if (!candidate.chinese && weight === 1 && (broader = broaderRarity(candidate.keys, term, idf)) > 0) {
      // A broader word for the question's: as telling as that word is among the sentences, and no more than the term.
      matched += BROADER_SHARE * weight * Math.min(rarity ?? rarest, broader);
      holdsTerm = true;
      holdsSubject = true;
    } else if (!phrase && candidate.headingKeys.has(term)) {
      matched += HEADING_SHARE * weight * (rarity ?? rarest);
      holdsSubject ||= !MODEL_NAME.test(term);
    }
  }
  matched += severalFactor(glossarySources) * GLOSSARY_SHARE * throughGlossary;
  // A Chinese word of the question in an English sentence: by its rarest translation the sentence holds, or else, as a
  // heading word counts, one its section's heading holds ("Wi-Fi bands" for 频段).
  let translatedHeld = 0;
  // For each Chinese word of the question found through its translations, those the sentence holds.
  const translationsFound: string[][] = [];
  for (const { word, keys: translations } of part.translatedWords) {
    const rarities = translations.flatMap((key) => idf.get(key) ?? []);
    const held = heldRarities(candidate, translations, idf);
    if (rarities.length > 0) {
      total += TRANSLATED_WORD_SHARE * Math.max(...rarities);
      known += 1;
    }
    if (held.length > 0) {
      translatedHeld += Math.max(...held);
      translationsFound.push(translations.filter((key) => candidate.keys.has(key)));
      holdsTerm = true;
      holdsSubject = true;
      continue;
    }
    // Else by a broader word for one of its translations (啤酒: "beer", by "alcohol"), as for an English word (see
    // BROADER_SHARE); not for a function word, whose translations are senses the question does not mean (才能: "aptitude").
    if (!candidate.chinese && !isFunctionWordKey(word)) {
      const broader = Math.max(0, ...translations.map((key) => Math.min(idf.get(key) ?? rarest, broaderRarity(candidate.keys, key, idf))));
      if (broader > 0) {
        matched += BROADER_SHARE * TRANSLATED_WORD_SHARE * broader;
        holdsTerm = true;
        holdsSubject = true;
        continue;
      }
    }
    const inSection = candidate.chinese ? [] : translations.filter((key) => candidate.sectionKeys.has(key));
    if (inSection.length > 0) {
      matched += HEADING_SHARE * TRANSLATED_WORD_SHARE * Math.max(...inSection.map((key) => idf.get(key) ?? rarest));
      holdsSubject = true;
    }
  }
  // A Chinese word of the question that no sentence holds, in a Chinese sentence by another word for it (see
  // keysOfAnotherWordFor: 进水 for 泡水, 过期 for 到期), as a translated word counts: the two words' translations meet in
  // one of their many senses. Counted at half, 期限 found by 过期 brought the points' validity into the answer to
  // "退货期限是几天？退货运费谁承担？" in place of the 30-day limit.
  let pivotHeld = 0;
  if (candidate.chinese && part.chinese && part.pivotWords.length > 0) {
    const byKey = chineseWordsByTranslation(candidate);
    for (const word of part.pivotWords) {
      const shared = candidate.text.includes(word) ? [] : keysOfAnotherWordFor(word, byKey);
      if (shared.length === 0) continue;
      pivotHeld += Math.max(...shared.map((key) => idf.get(key) ?? rarest));
      holdsTerm = true;
      holdsSubject = true;
    }
  }
  matched += TRANSLATED_WORD_SHARE * pivotHeld;
  // A character of the question that no known word covers, in an English sentence by its glosses (钱: "money").
  if (!candidate.chinese) {
    let characterHeld = 0;
    for (const { keys } of part.translatedCharacters) {
      const held = heldRarities(candidate, keys, idf);
      if (held.length === 0) continue;
      characterHeld += Math.max(...held);
      holdsTerm = true;
      holdsSubject = true;
    }
    matched += CHARACTER_TRANSLATION_SHARE * characterHeld;
  }
  matched += severalFactor(translationsFound) * TRANSLATED_WORD_SHARE * translatedHeld;
  if (matched === 0) return 0;
  // Characters tell apart the sentences that hold a term of the question; alone they are too weak a sign ("期" of 期限 in 保修期).
  if (holdsTerm) for (const character of part.characters) if (candidate.characters.has(character)) matched += CHARACTER_SHARE * characterIdf.get(character)!;
  const givesWhatIsAskedFor = givesWhatIsAsked(candidate, part);
  // A question that its section's headings name whole ("退货政策是什么？" under 退货与保修政策 / 退货) asks for the section:
  // its sentences in their order, however long.
  const words = wholeWordsOf(part);
  const namesSection = words.length > 0 && words.every((term) => candidate.headingKeys.has(term));
  const lengthFactor = namesSection ? 1 : (SATURATION + 1) / (1 + SATURATION * (1 - LENGTH_WEIGHT + (LENGTH_WEIGHT * candidate.length) / averageLength));
  // (A question of model names alone scales every sentence alike.)
  return (holdsSubject ? 1 : MODEL_NAME_ONLY_SHARE) * lengthFactor * (matched + (givesWhatIsAskedFor ? Math.min(matched, total / Math.max(1, known)) : 0));
}

const unitsOfNumbersOf = new WeakMap<Candidate, Map<string, Set<string>>>();

/**
 * Whether a sentence writes a number of the question only in other units than the question counts it in: "满 5000
 * 元升级为金卡会员" does not hold the 5000 of "我攒了 5000 积分，能当多少钱花？", and came first for it. A number either
 * writes without a unit may be the same amount.
 */
function countedInOtherUnits(candidate: Candidate, part: QuestionPart, term: string): boolean {
  const asked = part.unitsOfNumber.get(term);
  if (!asked) return false;
  const units = unitsOfNumbersOf.get(candidate) ?? unitsOfNumbersOf.set(candidate, unitsOfNumbers(candidate.text)).get(candidate)!;
  const written = units.get(term);
  return written !== undefined && !written.has('') && ![...written].some((unit) => asked.has(unit));
}

/** The rarities of the keys a sentence holds, of those given. */
function heldRarities(candidate: Candidate, keys: readonly string[], idf: Map<string, number>): number[] {
  return keys.flatMap((key) => (candidate.keys.has(key) ? [idf.get(key)!] : []));
}

const wholeWordsOfPart = new WeakMap<QuestionPart, string[]>();

/** The terms of a part that count as a whole word (weight 1), read once per part: a long question has thousands of terms. */
function wholeWordsOf(part: QuestionPart): string[] {
  let words = wholeWordsOfPart.get(part);
  if (!words) wholeWordsOfPart.set(part, (words = [...part.terms].filter(([, weight]) => weight === 1).map(([term]) => term)));
  return words;
}

const chineseWordsByTranslationOf = new WeakMap<Candidate, Map<string, string[]>>();

/** A Chinese sentence's words by the English keys they translate to (see chineseWordsByEnglishKey), read once per sentence. */
function chineseWordsByTranslation(candidate: Candidate): Map<string, string[]> {
  return chineseWordsByTranslationOf.get(candidate) ?? chineseWordsByTranslationOf.set(candidate, chineseWordsByEnglishKey(candidate.keys)).get(candidate)!;
}

/**
 * Whether a Chinese sentence holds another word for one of an English term's common translations (see
 * keysOfAnotherWordFor: 图片 for "photo"'s 照片), ECDICT's first ones: the rare words whose CC-CEDICT gloss names the
 * term found others by senses the question does not mean ("refund": 退还 "to return", by 退货 "to return goods";
 * "member": 构件 "component", by 配件; "give": 获赠 "to be given", by 获得 "to receive"), and a word the glosses leave
 * out ("give", "go") has none. For a word found only by translations of its own (see hasOwnTranslations), not a word
 * that translates its stem: 许可 ("to allow") is no other word for "allowance"'s 允许.
 */
function holdsSynonym(candidate: Candidate, term: string, part: QuestionPart): boolean {
  const byKey = chineseWordsByTranslation(candidate);
  const notTranslating = part.ownTranslationTerms.has(term) ? term : undefined;
  return (part.commonTranslationsOfTerm.get(term) ?? []).some((translation) => keysOfAnotherWordFor(translation, byKey, notTranslating).length > 0);
}

/** The Chinese words of a Chinese sentence that translate an English term of the question: its words the glossary translates to it, and its translations the sentence holds. */
function translationsHeld(candidate: Candidate, term: string, part: QuestionPart): string[] {
  const held = (part.translationsOfTerm.get(term) ?? chineseWordsOfKey(term)).filter((word) => holdsTranslation(candidate.text, word));
  if (candidate.translatedKeys.has(term)) for (const key of candidate.keys) if (containsCjk(key) && englishKeysOf(key).includes(term)) held.push(key);
  return held;
}

/** SEVERAL_TRANSLATIONS_FACTOR where two or more of the question's words are found through distinct translations, else 1. */
function severalFactor(found: string[][]): number {
  return distinctlyMatched(found) >= 2 ? SEVERAL_TRANSLATIONS_FACTOR : 1;
}

/**
 * How many of the question's words are found through translations that are not one another's: each word is given one
 * of its translations that no word before it took. "internet" and "network" are both 网络, and a sentence that holds
 * only 网络 holds one of them, not two (see SEVERAL_TRANSLATIONS_FACTOR).
 */
function distinctlyMatched(found: string[][]): number {
  const taken = new Set<string>();
  let count = 0;
  for (const translations of found) {
    const free = translations.find((translation) => !taken.has(translation));
    if (free === undefined) continue;
    taken.add(free);
    count += 1;
  }
  return count;
}

/** The rarity of the rarest broader word for the term (see common/hypernyms) that a sentence's keys hold; 0 for none. */
function broaderRarity(keys: Set<string>, term: string, idf: Map<string, number>): number {
  let rarity = 0;
  for (const key of broaderKeys(term)) if (keys.has(key)) rarity = Math.max(rarity, idf.get(key)!);
  return rarity;
}

/** A model number or code name: a few letters, then digits ("x1", "rt5", "gt86"); not a quantity ("5g", "100ml", "10pm"). */
const MODEL_NAME = /^[a-z]{1,4}\d{1,4}[a-z]?$/;

/**
 * A question that names a product ("X1 的固件…") is answered from what is
 * about it: where some documents are named for one of its model names (in
 * their file name or a retrieved heading), a sentence that names none of them
 * itself, in a document named for none of them, counts NAMELESS_SHARE of its
 * score. A sentence that mentions the model ("包括 Aurora X1") keeps its score;
 * one in a document named for it counts NAMED_DOCUMENT_FACTOR of it.
 */
export function nameFactor(candidate: Candidate, part: QuestionPart, namedBySource: ReadonlyMap<string, Set<string>>): number {
  const names = [...part.terms.keys()].filter((term) => MODEL_NAME.test(term));
  if (names.length === 0) return 1;
  const holds = (keys: Set<string> | undefined) => names.some((name) => keys?.has(name));
  if (holds(namedBySource.get(candidate.passage.source))) return NAMED_DOCUMENT_FACTOR;
  if (holds(candidate.keys) || ![...namedBySource.values()].some(holds)) return 1;
  return NAMELESS_SHARE;
}

/** The model names each document is named for: in its file name and the headings of its retrieved passages. */
export function modelNamesBySource(candidates: Candidate[]): Map<string, Set<string>> {
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
