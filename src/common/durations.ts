import Nzh from 'nzh';

/**
 * Durations as comparison keys, the same however a text says them: "a
 * year", "12 个月" and "twelve months" are one key, as are "a month" and
 * "30 天", "半个月" and "15 days". A question that asks "within a month"
 * matches the sentence that says "30 天内". A month counts 30 days and a
 * year 12 months (and 365 days).
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

const HALF = String.raw`[\s-]{1,2}and[\s-]{1,2}a[\s-]{1,2}half`;
// Bounded spaces: runs of \s* side by side backtrack for as long as a run of spaces is.
const ENGLISH_DURATION = new RegExp(
  String.raw`\b(half an?|an? half|\d{1,6}(?:\.\d{1,3})?|${Object.keys(ENGLISH_NUMBERS).join('|')})(?:${HALF})?[\s-]{0,2}(seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?)\b(?:${HALF}\b)?`,
  'gi',
);
/** What makes "a day" a rate ("60 USD a day", "8 hours a day", "twice a year"), not a span. */
const RATE_BEFORE = /(?:\b(?:once|twice|thrice|times|per|every|each)|\d[\d.,]*\s{0,2}[\p{L}%]*|\p{Sc})\s{0,2}$/iu;
// 个 may stand between the number and its unit (三个月), 半 before or after the unit (半个月, 一个半月, 一年半).
const CHINESE_DURATION = /(\d{1,6}(?:\.\d{1,3})?|[零一二两三四五六七八九十百千万]{1,8}|半)\s{0,2}(个)?\s{0,2}(半)?\s{0,2}(秒钟|秒|分钟|小时|钟头|天|日|周|星期|礼拜|月|年)(半)?/g;

interface Span {
  /** The span's text, and what of it stays once its number is taken out (its unit). */
  text: string;
  unitText: string;
  seconds: number;
}

/** A number written in digits or Chinese numerals ("12", "十二", "两"), or 半 (a half). */
export function chineseNumber(text: string): number {
  if (text === '半') return 0.5;
  if (/^\d/.test(text)) return Number(text);
  return Number(Nzh.cn.decodeS(text.replace(/两/g, '二')));
}

/**
 * A Chinese number and unit that name no span: an ordinal (第三天), a date (3 月, 三月十五日, 2025 年), a word that only
 * starts with the number (同一天, 统一, 一年级, 三周年).
 */
function isNotChineseSpan(text: string, index: number, match: RegExpMatchArray): boolean {
  const [whole, number, measureWord, half, unit] = match;
  const before = text.slice(Math.max(0, index - 6), index);
  const after = text.charAt(index + whole.length);
  if (before.endsWith('第')) return true;
  if (number === '一' && /[同统唯单万之逐]$/.test(before)) return true;
  if (unit === '月' && !measureWord && !half && number !== '半' && number !== '两') return true;
  if (unit === '日' && !measureWord && (/^\d+$/.test(number) || before.includes('月'))) return true;
  if (unit === '年' && (chineseNumber(number) >= 1000 || /[级代轻纪龄]/.test(after))) return true;
  if (unit === '周' && after === '年') return true;
  return false;
}

/** Full-width digits as ASCII ones, one for one, so that positions stay. */
export function withAsciiDigits(text: string): string {
  return text.replace(/[０-９]/g, (digit) => String.fromCharCode(digit.charCodeAt(0) - 0xfee0));
}

/** The spans of time a text states, in English or Chinese. */
function spansOf(rawText: string): Span[] {
  const text = withAsciiDigits(rawText);
  const spans: Span[] = [];
  for (const match of text.matchAll(ENGLISH_DURATION)) {
    const [whole, number, unitWord] = match;
    const word = number.toLowerCase().replace(/\s+/g, ' ');
    const unit = unitWord.toLowerCase().replace(/s$/, '') as keyof typeof SECONDS;
    if (/^an?$/.test(word) && (unit === 'second' || RATE_BEFORE.test(text.slice(Math.max(0, match.index! - 24), match.index)))) continue;
    // "half a year", "a half hour", "two and a half hours", "a year and a half"
    const amount = (/half/.test(word) ? 0.5 : (ENGLISH_NUMBERS[word] ?? Number(word))) + (/and[\s-]{1,2}a[\s-]{1,2}half/i.test(whole) ? 0.5 : 0);
    spans.push({ text: whole, unitText: unitWord, seconds: amount * SECONDS[unit] });
  }
  for (const match of text.matchAll(CHINESE_DURATION)) {
    if (isNotChineseSpan(text, match.index!, match)) continue;
    const [whole, number, , half, unitWord, trailingHalf] = match;
    const amount = chineseNumber(number) + ((half && number !== '半') || trailingHalf ? 0.5 : 0);
    spans.push({ text: whole, unitText: unitWord, seconds: amount * SECONDS[CHINESE_UNIT[unitWord]] });
  }
  return spans.filter((span) => Number.isFinite(span.seconds) && span.seconds > 0);
}

/** One key per span: 365 days are a year, as 12 months are. */
function keyOf(seconds: number): string {
  const days = seconds / 86_400;
  return `⟨duration ${Math.round(days === 365 || days === 366 ? SECONDS.year : seconds)}s⟩`;
}

/**
 * The text with each span's number taken out, its unit kept ("12 个月内" → "月内", "a two-year warranty" → "a year
 * warranty"): a question's span is then matched by its key (`durationKeys`), not also by the words it is said in.
 */
export function withoutDurationNumbers(text: string): string {
  let out = text;
  for (const span of spansOf(text)) out = out.replace(span.text, ` ${span.unitText} `);
  return out;
}

/** The keys of the spans of time a text states, in English or Chinese: one per span, the same in any unit. */
export function durationKeys(text: string): Set<string> {
  return new Set(spansOf(text).map((span) => keyOf(span.seconds)));
}
