import { isEnglishWord, matchKey } from './match-keys.js';
import { wordSegments } from './segments.js';
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
/** The longest translation of the table, in characters. */
const LONGEST_TRANSLATION = 8;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]{2,}/g;
const KEY_PREFIX = '⟨phrase ';

interface PhraseIndex {
  /** By the match key of a phrase's first word: its second word (a particle as written, else its match key), how far after the first it may be, and the phrase's key. */
  byFirst: Map<string, Array<{ second: string; gap: number; key: string }>>;
  /** The keys of the phrases each Chinese translation translates. */
  byTranslation: Map<string, string[]>;
}

let phraseIndex: PhraseIndex | undefined;

/** Reads the phrase table now (the service warms it at start-up, so that no request waits for it). */
export function loadPhrases(): PhraseIndex {
  if (phraseIndex) return phraseIndex;
  const byFirst = new Map<string, Array<{ second: string; gap: number; key: string }>>();
  const byTranslation = new Map<string, string[]>();
  for (const [phrase, translations] of Object.entries(englishChinesePhrases as Record<string, string[]>)) {
    const [first, second] = phrase.split(' ').map(wordKey);
    const key = `${KEY_PREFIX}${first} ${second}⟩`;
    (byFirst.get(first) ?? byFirst.set(first, []).get(first)!).push({ second, gap: PARTICLES.has(second) ? PARTICLE_GAP : 0, key });
    for (const translation of translations) (byTranslation.get(translation) ?? byTranslation.set(translation, []).get(translation)!).push(key);
  }
  return (phraseIndex = { byFirst, byTranslation });
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
  const { byFirst, byTranslation } = loadPhrases();
  const keys = new Set<string>();
  const lower = text.toLowerCase();
  const words: string[] = [];
  for (const { segment, isWordLike } of wordSegments(lower)) if (isWordLike) words.push(wordKey(segment));
  words.forEach((word, i) => {
    for (const { second, gap, key } of byFirst.get(word) ?? []) {
      for (let j = i + 1; j <= i + 1 + gap && j < words.length; j += 1) {
        if (words[j] === second) {
          keys.add(key);
          break;
        }
      }
    }
  });
  for (const run of lower.match(HAN_RUN) ?? []) {
    for (let start = 0; start + 2 <= run.length; start += 1) {
      for (let end = start + 2; end <= Math.min(run.length, start + LONGEST_TRANSLATION); end += 1) {
        for (const key of byTranslation.get(run.slice(start, end)) ?? []) keys.add(key);
      }
    }
  }
  return keys;
}
