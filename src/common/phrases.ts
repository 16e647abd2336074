import { isEnglishWord, matchKey } from './match-keys.js';
import englishChinesePhrases from './data/english-chinese-phrases.json' with { type: 'json' };

/**
 * English phrases of two words and their Chinese translations, as comparison keys the same in either language:
 * "parental controls" and 家长控制 hold one key, "Power it on" and 通电 another. The glossary (see glossary.ts)
 * translates word by word, and a phrase's words translate to little of what it means (家长 is no "parental"; 通电 is
 * "to set up an electric circuit"). From ECDICT's phrases (data/english-chinese-phrases.json, written by
 * scripts/build-english-chinese-table.mjs; MIT, see data/NOTICE.md).
 */

/** The particles of phrasal verbs, found up to PARTICLE_GAP words after their verb. */
const PARTICLES = new Set(['on', 'off', 'up', 'down', 'in', 'out', 'back', 'over', 'away']);
/** Words a verb and its particle may have between them ("power it on", "send the router back"). */
const PARTICLE_GAP = 2;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]{2,}/g;
const LATIN_WORD = /[a-z0-9]+/g;
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
 * The keys of the phrases a text holds: in English, its two words in order, by their match keys ("parental
 * controls"), a particle up to PARTICLE_GAP words after its verb ("power it on"); in Chinese, a translation anywhere
 * in a run of Han characters (家长控制可以…). A text is read in time that grows with its length.
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
    for (let j = i + 1; j <= i + 1 + PARTICLE_GAP && j < words.length; j += 1) {
      const key = seconds.get(words[j]);
      // A particle may stand a few words after its verb ("power it on"); a compound's words stand together.
      if (key !== undefined && (j === i + 1 || PARTICLES.has(words[j]))) keys.add(key);
    }
  });
  for (const run of lower.match(HAN_RUN) ?? []) {
    for (let start = 0; start + 2 <= run.length; start += 1) {
      const longest = longestByOpening.get(run.slice(start, start + 2));
      if (longest === undefined) continue;
      for (let end = start + 2; end <= Math.min(run.length, start + longest); end += 1) {
        for (const key of byTranslation.get(run.slice(start, end)) ?? []) keys.add(key);
      }
    }
  }
  return keys;
}
