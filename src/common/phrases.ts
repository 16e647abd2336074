import { isEnglishWord, matchKey } from './match-keys.js';
import { HAN, wordSegments } from './segments.js';
import englishChinesePhrases from './data/english-chinese-phrases.json' with { type: 'json' };

/**
 * English phrases of two words and their Chinese translations, as comparison keys the same in either language:
 * "parental controls" and 家长控制 hold one key, "Power it on" and 通电 another. The glossary (see glossary.ts)
 * translates word by word, and a phrase's words translate to little of what it means (家长 is no "parental"; 通电 is
 * "to set up an electric circuit"). From ECDICT's phrases (data/english-chinese-phrases.json, written by
 * scripts/build-english-chinese-table.mjs; MIT, see data/NOTICE.md).
 */

/** The particles of phrasal verbs, found right after their verb or after a pronoun between them ("power it on"). */
const PARTICLES = new Set(['on', 'off', 'up', 'down', 'in', 'out', 'back', 'over', 'away']);
/**
 * The words that may stand between a verb and its particle: pronouns. Not a noun: "Log files in the folder" is no
 * "log in", "Check the box in Settings" no "check in".
 */
const BETWEEN_VERB_AND_PARTICLE = new Set(['it', 'them', 'him', 'her', 'me', 'us', 'you', 'this', 'that', 'these', 'those', 'something', 'everything', 'one']);
/** A translation that translates more phrases than this is a common word ("开始": "turn on", "set out"…), not one phrase's. */
const PHRASES_PER_TRANSLATION = 3;
const HAN_RUN = new RegExp(`${HAN.source}{2,}`, 'g');
/** Runs of letters and digits, and the marks that end a sentence or a clause: a particle is not looked for across them. */
const LATIN_WORD = /[a-z0-9]+|[.;:!?。；：！？]/g;
const KEY_PREFIX = '⟨phrase ';

interface PhraseIndex {
  /** The phrases' keys by their first word, then their second (a particle as written, another word by its match key). */
  byWords: Map<string, Map<string, string>>;
  /** The keys of the phrases each Chinese translation translates. */
  byTranslation: Map<string, string[]>;
  /** By their first two characters, the length of the longest translation that starts with them: most places in a text start none. */
  longestByOpening: Map<string, number>;
}

let phraseIndex: PhraseIndex | undefined;

/** Reads the phrase table now (the service warms it at start-up, so that no request waits for it). */
export function loadPhrases(): PhraseIndex {
  if (phraseIndex) return phraseIndex;
  const byWords = new Map<string, Map<string, string>>();
  const byTranslation = new Map<string, string[]>();
  const longestByOpening = new Map<string, number>();
  for (const [phrase, translations] of Object.entries(englishChinesePhrases as Record<string, string[]>)) {
    const [first, second] = phrase.split(' ').map(wordKey);
    const key = `${KEY_PREFIX}${first} ${second}⟩`;
    (byWords.get(first) ?? byWords.set(first, new Map()).get(first)!).set(second, key);
    for (const translation of translations) {
      (byTranslation.get(translation) ?? byTranslation.set(translation, []).get(translation)!).push(key);
      const opening = translation.slice(0, 2);
      longestByOpening.set(opening, Math.max(longestByOpening.get(opening) ?? 0, translation.length));
    }
  }
  for (const [translation, keys] of byTranslation) if (keys.length > PHRASES_PER_TRANSLATION) byTranslation.delete(translation);
  return (phraseIndex = { byWords, byTranslation, longestByOpening });
}

/** A particle as written ("on" is no stem of anything else), another English word by its match key. */
function wordKey(word: string): string {
  return PARTICLES.has(word) || !isEnglishWord(word) ? word : matchKey(word);
}

/** Whether a comparison key is a phrase's (see phraseKeys). */
export function isPhraseKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX);
}

/**
 * The words after which a question's next word is a verb: a subject pronoun, "to", a modal, and the "t" of "can't",
 * "won't" ("Can I turn off…", "how do I set it up", "why won't it power on").
 */
const BEFORE_A_VERB = new Set(['i', 'you', 'we', 'they', 'it', 'he', 'she', 'to', 'please', 'can', 'could', 'should', 'must', 'may', 'might', 'will', 'would', 't']);
/** The words that open a noun between a verb and its particle in a sentence ("Turn the router off"). */
const DETERMINERS = new Set(['the', 'a', 'an', 'your', 'my', 'its', 'their', 'our', 'his', 'her', 'this', 'that']);

/**
 * The phrasal verbs of a text, each as its verb's match key, a space and its particle ("turn off", "power on"): a word
 * right before a particle or before a pronoun and a particle.
 * - For a question (`verbsOnly`), only a word after a subject or a modal (BEFORE_A_VERB): a question may open with a
 *   noun ("Light on the X1 blinks red?"), and "the light on the X1" names no "light on".
 * - For a sentence, also a word before a determiner, a word and a particle ("Turn the router off", "Switch the power
 *   back on"): reading one there that is not only lets the sentence count its verb in full.
 */
export function phrasalVerbs(text: string, { verbsOnly }: { verbsOnly: boolean }): Set<string> {
  const found = new Set<string>();
  const words = text.toLowerCase().match(LATIN_WORD) ?? [];
  words.forEach((word, i) => {
    if (PARTICLES.has(word) || BETWEEN_VERB_AND_PARTICLE.has(word) || !isEnglishWord(word) || (verbsOnly && !BEFORE_A_VERB.has(words[i - 1]))) return;
    const afterPronoun = BETWEEN_VERB_AND_PARTICLE.has(words[i + 1]);
    const afterNoun = !verbsOnly && DETERMINERS.has(words[i + 1]);
    for (const particle of [words[i + 1], afterPronoun ? words[i + 2] : undefined, afterNoun ? words[i + 3] : undefined, afterNoun ? words[i + 4] : undefined]) {
      if (particle !== undefined && PARTICLES.has(particle)) found.add(`${matchKey(word)} ${particle}`);
    }
  });
  return found;
}

/**
 * The keys of the phrases a text holds: in English, its two words in order, by their match keys ("parental
 * controls"), a particle also after a pronoun ("power it on"); in Chinese, a translation that begins and ends where the
 * segmenter cuts words (家长|控制|可以…). A text is read in time that grows with its length.
 */
export function phraseKeys(text: string): Set<string> {
  const { byWords, byTranslation, longestByOpening } = loadPhrases();
  const keys = new Set<string>();
  const lower = text.toLowerCase();
  // Runs of letters and digits, not the segmenter's words: phrases are of plain English words, and the segmenter costs
  // several times as much as this match for every sentence the offline model scores.
  const words = (lower.match(LATIN_WORD) ?? []).map(wordKey);
  words.forEach((word, i) => {
    const seconds = byWords.get(word);
    if (!seconds) return;
    const next = seconds.get(words[i + 1]);
    if (next !== undefined) keys.add(next);
    // A particle may stand after a pronoun ("power it on"); a compound's words stand together.
    const afterPronoun = BETWEEN_VERB_AND_PARTICLE.has(words[i + 1]) ? seconds.get(words[i + 2]) : undefined;
    if (afterPronoun !== undefined && PARTICLES.has(words[i + 2])) keys.add(afterPronoun);
  });
  // A translation counts where the segmenter's words begin and end (家长|控制 holds 家长控制), not inside other words
  // (交通电话 holds no 通电); the text is segmented only when some translation is found in it.
  let bounds: Set<number> | undefined;
  const atWordBounds = (start: number, end: number) => {
    if (!bounds) {
      bounds = new Set([0, lower.length]);
      for (const { index, segment } of wordSegments(lower)) bounds.add(index).add(index + segment.length);
    }
    return bounds.has(start) && bounds.has(end);
  };
  for (const run of lower.matchAll(HAN_RUN)) {
    const text = run[0];
    for (let start = 0; start + 2 <= text.length; start += 1) {
      const longest = longestByOpening.get(text.slice(start, start + 2));
      if (longest === undefined) continue;
      for (let end = start + 2; end <= Math.min(text.length, start + longest); end += 1) {
        const found = byTranslation.get(text.slice(start, end));
        if (found && atWordBounds(run.index + start, run.index + end)) for (const key of found) keys.add(key);
      }
    }
  }
  return keys;
}
