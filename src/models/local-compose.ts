import { matchKeys, wordKeys } from '../common/match-keys.js';
import { questionParts } from '../common/question-parts.js';
import { sentencesOf } from '../common/sentences.js';
import { chineseWordsOfKey, englishKeysOf, holdsTranslation, translatedKeys } from '../common/glossary.js';
import { chineseCharacters, clip, containsCjk } from '../common/text.js';
import { durationKeys } from '../common/durations.js';
import { percentageKeys, withoutPercentages } from '../common/percentages.js';
import { isPhraseKey, phrasalVerbs, phraseKeys } from '../common/phrases.js';
import { inverseDocumentFrequency } from '../common/inverse-frequency.js';
import { broaderKeys } from '../common/hypernyms.js';
import { questionPart, type QuestionPart } from './local-question.js';
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
/** BM25's length normalisation of a sentence's score: how much its length counts (0 not at all, 1 fully), and how soon a term's weight saturates. */
const LENGTH_WEIGHT = 0.5;
const SATURATION = 1.2;

function citation(passage: Passage): string {
  return passage.page ? `[${passage.source} p.${passage.page}]` : `[${passage.source}]`;
}

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
  /** The keys of the nearest heading above it: its section's, which names its topic ("Wi-Fi bands"), or the document's title where the passage shows no section heading above it. */
  sectionKeys: Set<string>;
  /** Its phrasal verbs (see common/phrases), in an English sentence. */
  phrasalVerbs: Set<string>;
  /** Its Chinese characters, for the question's words that no sentence holds whole. */
  characters: Set<string>;
  /** How many distinct words it has: a long sentence holds a question's terms by chance more often than a short one. */
  length: number;
}

/** A document's file name as words ("aurora-x1-router-manual.md" → "aurora x1 router manual"): it names the document's topic, as a heading above all of it would. */
function documentName(source: string): string {
  return source.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[-_.]+/g, ' ');
}

/** Sentences of the passages, each once (see withoutRepeats). */
function candidatesOf(passages: Passage[]): Candidate[] {
  const all: Candidate[] = [];
  const edges = new Set<Candidate>();
  // Sentences repeat between overlapping passages, and headings stand above several sentences: each is read once.
  const keysOf = new Map<string, Set<string>>();
  // A span of time is also a key of its own, the same in any unit or language ("12 个月" and "a year"), as is a phrase
  // ("power it on" and 通电); a percentage is a key of its own and not a number.
  const keys = (text: string) =>
    keysOf.get(text) ?? keysOf.set(text, new Set([...matchKeys(withoutPercentages(text)), ...durationKeys(text), ...percentageKeys(text), ...phraseKeys(text)])).get(text)!;
  const noKeys = new Set<string>();
  const noPhrasalVerbs = new Set<string>();
  passages.forEach((passage, rank) => {
    const sentences = passageSentencesWithHeadings(passage.text);
    sentences.forEach((sentence, index) => {
      const candidate: Candidate = {
        text: sentence.text,
        chinese: containsCjk(sentence.text),
        passage,
        rank,
        order: rank * PASSAGE_ORDER + index,
        keys: keys(sentence.text),
        translatedKeys: containsCjk(sentence.text) ? translatedKeys(keys(sentence.text)) : noKeys,
        phrasalVerbs: containsCjk(sentence.text) ? noPhrasalVerbs : phrasalVerbs(sentence.text, { verbsOnly: false }),
        characters: new Set(chineseCharacters(sentence.text)),
        headingKeys: keys([documentName(passage.source), ...sentence.headings].join(' ')),
        sectionKeys: keys(sentence.headings.at(-1) ?? ''),
        length: wordKeys(sentence.text).size,
      };
      all.push(candidate);
      if (index === 0 || index === sentences.length - 1) edges.add(candidate);
    });
  });
  return withoutRepeats(all, edges);
}

/** Room in `order` for a passage's sentences: a passage of 100 000 characters has fewer. */
const PASSAGE_ORDER = 1_000_000;

/**
 * The sentences without one that another holds whole: the overlap between neighbouring chunks repeats the sentences
 * around their boundary, and cuts one at the end of the first chunk and one at the start of the next. A sentence found
 * twice is kept where it is first; a piece of a sentence can only be the first or last sentence of its passage (an
 * `edge`), so only those are searched for in the others, and the cost grows with the sentences, not their square (every
 * sentence searched in every other took 1 s for 20 passages of 30 000 characters).
 */
function withoutRepeats(all: Candidate[], edges: ReadonlySet<Candidate>): Candidate[] {
  const normalised = new Map(all.map((candidate) => [candidate, candidate.text.replace(/\s+/g, ' ').toLowerCase()]));
  const firstOfText = new Map<string, Candidate>();
  for (const candidate of all) if (!firstOfText.has(normalised.get(candidate)!)) firstOfText.set(normalised.get(candidate)!, candidate);
  const once = [...firstOfText.values()];
  return once.filter((candidate) => {
    if (!edges.has(candidate)) return true;
    const text = normalised.get(candidate)!;
    return !once.some((other) => other !== candidate && normalised.get(other)!.length > text.length && normalised.get(other)!.includes(text));
  });
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
 * which then asks for the whole section. A sentence that holds, itself or in
 * its headings, no word of the question but its model names counts less (see
 * MODEL_NAME_ONLY_SHARE). Zero without a term of the question.
 */
function relevance(candidate: Candidate, part: QuestionPart, idf: Map<string, number>, characterIdf: Map<string, number>, rarest: number, averageLength: number): number {
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
    if (candidate.keys.has(term)) {
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
  matched += (distinctlyMatched(glossarySources) >= 2 ? SEVERAL_TRANSLATIONS_FACTOR : 1) * GLOSSARY_SHARE * throughGlossary;
  // A Chinese word of the question in an English sentence: by its rarest translation the sentence holds, or else, as a
  // heading word counts, one its section's heading holds ("Wi-Fi bands" for 频段).
  let translatedHeld = 0;
  // For each Chinese word of the question found through its translations, those the sentence holds.
  const translationsFound: string[][] = [];
  for (const translations of part.translatedWords) {
    const rarities = translations.flatMap((key) => idf.get(key) ?? []);
    const held = translations.flatMap((key) => (candidate.keys.has(key) ? [idf.get(key)!] : []));
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
    const inSection = candidate.chinese ? [] : translations.filter((key) => candidate.sectionKeys.has(key));
    if (inSection.length > 0) {
      matched += HEADING_SHARE * TRANSLATED_WORD_SHARE * Math.max(...inSection.map((key) => idf.get(key) ?? rarest));
      holdsSubject = true;
    }
  }
  matched += (distinctlyMatched(translationsFound) >= 2 ? SEVERAL_TRANSLATIONS_FACTOR : 1) * TRANSLATED_WORD_SHARE * translatedHeld;
  if (matched === 0) return 0;
  // Characters tell apart the sentences that hold a term of the question; alone they are too weak a sign ("期" of 期限 in 保修期).
  if (holdsTerm) for (const character of part.characters) if (candidate.characters.has(character)) matched += CHARACTER_SHARE * characterIdf.get(character)!;
  const givesWhatIsAskedFor = givesWhatIsAsked(candidate, part);
  // A question that its section's headings name whole ("退货政策是什么？" under 退货与保修政策 / 退货) asks for the section:
  // its sentences in their order, however long.
  const words = [...part.terms].filter(([, weight]) => weight === 1).map(([term]) => term);
  const namesSection = words.length > 0 && words.every((term) => candidate.headingKeys.has(term));
  const lengthFactor = namesSection ? 1 : (SATURATION + 1) / (1 + SATURATION * (1 - LENGTH_WEIGHT + (LENGTH_WEIGHT * candidate.length) / averageLength));
  // (A question of model names alone scales every sentence alike.)
  return (holdsSubject ? 1 : MODEL_NAME_ONLY_SHARE) * lengthFactor * (matched + (givesWhatIsAskedFor ? Math.min(matched, total / Math.max(1, known)) : 0));
}

/** The Chinese words of a Chinese sentence that translate an English term of the question: its words the glossary translates to it, and its translations the sentence holds. */
function translationsHeld(candidate: Candidate, term: string, part: QuestionPart): string[] {
  const held = (part.translationsOfTerm.get(term) ?? chineseWordsOfKey(term)).filter((word) => holdsTranslation(candidate.text, word));
  if (candidate.translatedKeys.has(term)) for (const key of candidate.keys) if (containsCjk(key) && englishKeysOf(key).includes(term)) held.push(key);
  return held;
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
