import { chineseNumber, withAsciiDigits } from './durations.js';

/**
 * Percentages as comparison keys: "20%", "20 percent" and 百分之二十 are one key, and none of them is the number 20, so
 * that a question about "a 20 dollar taxi" does not find "最多抵扣订单金额的 20%".
 */

/**
 * A number, not the end of another ("x1%", "1e3%", the "55555" of "20.55555%"), with thousands separated by commas or
 * not, then %, ％, "percent" or "per cent"; or 百分之 and a number in digits or Chinese numerals (百分之十五点五).
 */
const PERCENTAGE =
  /(?<![\p{L}\p{N}.,])(\d{1,3}(?:,\d{3})+|\d{1,9})(\.\d{1,6})?[ \t]{0,2}(?:%|％|\bper[ \t]?cent\b)|百分之[ \t]{0,2}(?:(\d{1,9}(?:\.\d{1,6})?)|([零一二两三四五六七八九十百千万]{1,8}(?:点[零一二三四五六七八九]{1,6})?))/giu;

/** Full-width digits and full stops as ASCII ones (２０．５％ is 20.5%). */
function withAsciiNumbers(text: string): string {
  return withAsciiDigits(text).replaceAll('．', '.');
}

function valueOf([, whole, fraction, chineseDigits, chineseNumerals]: RegExpMatchArray): number {
  if (whole !== undefined) return Number(whole.replace(/,/g, '') + (fraction ?? ''));
  if (chineseDigits !== undefined) return Number(chineseDigits);
  const [integer, decimals] = chineseNumerals.split('点');
  const digits = decimals ? [...decimals].map((numeral) => '零一二三四五六七八九'.indexOf(numeral)).join('') : '';
  return chineseNumber(integer || '零') + (digits ? Number(`0.${digits}`) : 0);
}

/** The keys of the percentages a text states, one per value. */
export function percentageKeys(text: string): Set<string> {
  const keys = new Set<string>();
  for (const match of withAsciiNumbers(text).matchAll(PERCENTAGE)) {
    const value = valueOf(match);
    if (Number.isFinite(value)) keys.add(`⟨percent ${value}⟩`);
  }
  return keys;
}

/** The text without its percentages: their numbers are matched by percentageKeys, not as numbers. */
export function withoutPercentages(text: string): string {
  return withAsciiNumbers(text).replace(PERCENTAGE, ' ');
}
