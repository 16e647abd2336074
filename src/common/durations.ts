import Nzh from 'nzh';

/**
 * Durations as comparison keys, the same however a text says them: "a
 * year", "12 个月" and "twelve months" are one key, as are "a month" and
 * "30 天", "半个月" and "15 days". A question that asks "within a month"
 * matches the sentence that says "30 天内". A month counts 30 days and a
 * year 12 months (and also 365 days).
 */

const SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  fortnight: 14 * 86_400,
  month: 30 * 86_400,
  year: 360 * 86_400,
};
const CHINESE_UNIT: Record<string, keyof typeof SECONDS> = {
  秒: 'second',
  秒钟: 'second',
  分钟: 'minute',
  小时: 'hour',
  钟头: 'hour',
  天: 'day',
  日: 'day',
  周: 'week',
  星期: 'week',
  礼拜: 'week',
  月: 'month',
  年: 'year',
};
const ENGLISH_NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  sixty: 60,
  ninety: 90,
};

const ENGLISH_DURATION = new RegExp(
  String.raw`\b(half an?|an? half|\d{1,6}(?:\.\d{1,3})?|${Object.keys(ENGLISH_NUMBERS).join('|')})[\s-]*(seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?)\b`,
  'gi',
);
// 个 may stand between the number and 月 (三个月), 半 before or after it (半个月, 一个半月).
const CHINESE_DURATION = /(\d{1,6}(?:\.\d{1,3})?|[零一二两三四五六七八九十百]{1,6}|半)\s*(个)?\s*(半)?\s*(秒钟|秒|分钟|小时|钟头|天|日|周|星期|礼拜|月|年)/g;

function chineseNumber(text: string): number {
  if (text === '半') return 0.5;
  if (/^\d/.test(text)) return Number(text);
  return Number(Nzh.cn.decodeS(text.replace(/两/g, '二')));
}

function keyOf(seconds: number): string {
  return `⟨duration ${Math.round(seconds)}s⟩`;
}

/**
 * The text with each duration's number taken out, its unit kept ("12 个月内" → "月内", "a two-year warranty" → "a year
 * warranty"): compared with `durationKeys` beside it, a span said the same way does not count twice.
 */
export function withoutDurationNumbers(text: string): string {
  return text
    .replace(ENGLISH_DURATION, (_, number: string, unit: string) => unit)
    .replace(CHINESE_DURATION, (whole: string, number: string, measureWord: string | undefined, half: string | undefined, unit: string) =>
      isDate(number, measureWord, half, unit) ? whole : unit,
    );
}

/** 日 and 月 without 个 after a number name a date ("1 月 5 日"), not a span; 三天, 三个月 and 三日 (in words) are spans. */
function isDate(number: string, measureWord: string | undefined, half: string | undefined, unit: string): boolean {
  return (unit === '月' && !measureWord && !half) || (unit === '日' && /^\d+$/.test(number) && !measureWord);
}

/** The keys of the durations a text states, in English or Chinese. */
export function durationKeys(text: string): Set<string> {
  const keys = new Set<string>();
  const add = (amount: number, unit: keyof typeof SECONDS) => {
    if (!Number.isFinite(amount) || amount <= 0) return;
    keys.add(keyOf(amount * SECONDS[unit]));
    if (unit === 'year') keys.add(keyOf(amount * 365 * 86_400));
  };
  for (const match of text.matchAll(ENGLISH_DURATION)) {
    const [, number, unitWord] = match;
    const word = number.toLowerCase().replace(/\s+/g, ' ');
    // "half a year", "a half hour"
    const amount = /half/.test(word) ? 0.5 : (ENGLISH_NUMBERS[word] ?? Number(word));
    add(amount, unitWord.toLowerCase().replace(/s$/, '') as keyof typeof SECONDS);
  }
  for (const match of text.matchAll(CHINESE_DURATION)) {
    const [, number, measureWord, half, unitWord] = match;
    if (isDate(number, measureWord, half, unitWord)) continue;
    add(chineseNumber(number) + (half && number !== '半' ? 0.5 : 0), CHINESE_UNIT[unitWord]);
  }
  return keys;
}
