import { chineseNumber } from './durations.js';

/**
 * Percentages as comparison keys: "20%", "20 percent" and 百分之二十 are one key, and none of them is the number 20, so
 * that a question about "a 20 dollar taxi" does not find "最多抵扣订单金额的 20%".
 */

const PERCENTAGE = /(\d{1,6}(?:\.\d{1,3})?)[ \t]{0,2}(?:%|％|\bper[ \t]?cent\b)|百分之[ \t]{0,2}(\d{1,6}(?:\.\d{1,3})?|[零一二两三四五六七八九十百千万]{1,8})/gi;

/** Full-width digits as ASCII ones, one for one, so that positions stay. */
function withAsciiDigits(text: string): string {
  return text.replace(/[０-９]/g, (digit) => String.fromCharCode(digit.charCodeAt(0) - 0xfee0));
}

/** The keys of the percentages a text states, one per value. */
export function percentageKeys(text: string): Set<string> {
  const keys = new Set<string>();
  for (const [, digits, chinese] of withAsciiDigits(text).matchAll(PERCENTAGE)) {
    const value = digits !== undefined ? Number(digits) : chineseNumber(chinese);
    if (Number.isFinite(value)) keys.add(`⟨percent ${value}⟩`);
  }
  return keys;
}

/** The text without its percentages: their numbers are matched by percentageKeys, not as numbers. */
export function withoutPercentages(text: string): string {
  return withAsciiDigits(text).replace(PERCENTAGE, ' ');
}
