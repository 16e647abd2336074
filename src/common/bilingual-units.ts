import { matchKey, wordKeys } from './match-keys.js';
import { chineseCharacters, containsCjk } from './text.js';

/**
 * Words that need no domain knowledge to translate: units and what a
 * question asks about. A question in one language names them for sentences
 * in the other ("按几秒" for "for 5 seconds").
 */
export const BILINGUAL_UNITS: Array<{ zh: RegExp; en: string[] }> = [
  { zh: /秒/, en: ['second', 'seconds'] },
  { zh: /分钟/, en: ['minute', 'minutes'] },
  { zh: /小时/, en: ['hour', 'hours'] },
  { zh: /\d\s*天|几天|多少天|每天|天内/, en: ['day', 'days'] },
  { zh: /工作日/, en: ['working', 'business'] },
  { zh: /周|星期/, en: ['week', 'weeks'] },
  { zh: /个月|几月|每月/, en: ['month', 'months'] },
  { zh: /\d\s*年|几年|多少年|每年/, en: ['year', 'years'] },
  { zh: /美元/, en: ['usd', 'dollars'] },
  { zh: /颜色/, en: ['colour', 'color'] },
  { zh: /几点|时间/, en: ['time'] },
];

/** The question's units in the other language: English keys for a Chinese question, Chinese characters for an English one. */
export function translatedUnits(question: string): { keys: Set<string>; characters: Set<string> } {
  const keys = new Set<string>();
  const characters = new Set<string>();
  const englishWords = wordKeys(question);
  for (const unit of BILINGUAL_UNITS) {
    if (containsCjk(question)) {
      if (unit.zh.test(question)) for (const word of unit.en) keys.add(matchKey(word));
    } else if (unit.en.some((word) => englishWords.has(matchKey(word)))) {
      for (const character of chineseCharacters(unit.zh.source)) if (!'几多少每内'.includes(character)) characters.add(character);
    }
  }
  return { keys, characters };
}

/** The English words of a Chinese question's units ("提前几天" → days), for a search in English. */
export function englishUnitWords(question: string): string[] {
  if (!containsCjk(question)) return [];
  return BILINGUAL_UNITS.filter((unit) => unit.zh.test(question)).map((unit) => unit.en.at(-1)!);
}
