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

/**
 * Units a number is counted in, in either language, by what they count: a number is the same amount only in the same
 * one ("5000 积分" is no "5000 元"). Longest spelling first within a unit; none that a word merely begins with.
 */
const COUNTED_UNITS: Array<{ unit: string; after: string }> = [
  { unit: 'yuan', after: String.raw`块钱|元|块|yuan\b|rmb\b|cny\b` },
  { unit: 'dollar', after: String.raw`美元|美金|usd\b|us dollars?\b|dollars?\b|bucks?\b` },
  { unit: 'point', after: String.raw`个?积分|points?\b|pts?\b` },
  { unit: 'second', after: String.raw`秒钟|秒|seconds?\b|secs?\b` },
  { unit: 'minute', after: String.raw`分钟|minutes?\b|mins?\b` },
  { unit: 'hour', after: String.raw`个?小时|hours?\b|hrs?\b` },
  { unit: 'day', after: String.raw`个?工作日|天|日|(?:working |business |calendar )?days?\b` },
  { unit: 'week', after: String.raw`个?(?:星期|礼拜)|周|weeks?\b` },
  { unit: 'month', after: String.raw`个月|months?\b` },
  { unit: 'year', after: String.raw`年|years?\b` },
  { unit: 'clock', after: String.raw`点钟|点|[ap]\.?m\.?(?![\p{L}\p{N}])|o'clock\b` },
  { unit: 'gigahertz', after: String.raw`ghz\b|千兆赫` },
  { unit: 'percent', after: String.raw`%|％|percent\b|per cent\b` },
];
const NUMBER_WITH_UNIT = new RegExp(
  String.raw`(?:([$¥￥])\s*)?(?<![\p{L}\p{N}.,])(\d+(?:[.,]\d+)*)(?:\s*(?:(${COUNTED_UNITS.map(({ after }) => `(${after})`).join('|')})))?`,
  'giu',
);

/**
 * The units each number of a text is counted in (see COUNTED_UNITS), by the number as written ("5000", "2.4"); a number
 * written without one has the unit '' among its units.
 */
export function unitsOfNumbers(text: string): Map<string, Set<string>> {
  const units = new Map<string, Set<string>>();
  for (const match of text.matchAll(NUMBER_WITH_UNIT)) {
    const [, currency, number] = match;
    const at = COUNTED_UNITS.findIndex((_, i) => match[4 + i] !== undefined);
    const unit = at >= 0 ? COUNTED_UNITS[at].unit : currency === '$' ? 'dollar' : currency ? 'yuan' : '';
    (units.get(number) ?? units.set(number, new Set()).get(number)!).add(unit);
  }
  return units;
}
