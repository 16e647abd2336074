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
 * one ("5000 积分" is no "5000 元"). Money is one unit whatever its currency: 块 and 元 name the local one, and a
 * question in Chinese about a policy in dollars says 25 块 for "25 USD". Longest spelling first within a unit, and a
 * unit's spelling is none where it begins a longer word (天津, 日本, 点击, 元旦, "dayspring").
 */
const COUNTED_UNITS: Array<{ unit: string; after: string }> = [
  {
    unit: 'money',
    after: String.raw`块钱|日元|美元|美金|欧元|英镑|港币|元(?![旦素宵首件])|块|yuan\b|rmb\b|cny\b|usd\b|us dollars?\b|dollars?\b|bucks?\b|eur\b|euros?\b|gbp\b`,
  },
  { unit: 'point', after: String.raw`个?积分|点积分|点数|points?\b|pts?\b` },
  { unit: 'year', after: String.raw`周年|周岁|年(?![级纪代轻])|years?\b` },
  { unit: 'second', after: String.raw`秒钟|秒(?![杀表])|seconds?\b|secs?\b` },
  { unit: 'minute', after: String.raw`分钟|minutes?\b|mins?\b` },
  { unit: 'hour', after: String.raw`个?小时|hours?\b|hrs?\b` },
  { unit: 'day', after: String.raw`个?工作日|天(?![津气然空堂下使才生真])|日(?![本期常记子语用报])|(?:working |business |calendar )?days?\b` },
  { unit: 'week', after: String.raw`个?(?:星期|礼拜)|周(?![末边围到])|weeks?\b` },
  { unit: 'month', after: String.raw`个月|months?\b` },
  { unit: 'clock', after: String.raw`点钟|点(?![击评赞心名头子])|[ap]\.?m\.?(?![\p{L}\p{N}])|o'clock\b` },
  { unit: 'gigahertz', after: String.raw`ghz\b|千兆赫` },
  { unit: 'percent', after: String.raw`%|％|percent\b|per cent\b` },
];
// A number after a Chinese character is one (满5000元); after a Latin letter, a digit or a separator it is part of a
// name or a longer number ("x1", "v2.4").
const NUMBER_WITH_UNIT = new RegExp(
  String.raw`(?:([$¥￥€£])\s*)?(?<![\p{Script=Latin}\p{N}.,_])(\d+(?:[.,]\d+)*)(?:\s*(?:(${COUNTED_UNITS.map(({ after }) => `(${after})`).join('|')})))?`,
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
    const unit = at >= 0 ? COUNTED_UNITS[at].unit : currency ? 'money' : '';
    (units.get(number) ?? units.set(number, new Set()).get(number)!).add(unit);
  }
  return units;
}
