import { translationsForSearch } from './glossary.js';
import { containsCjk, contentWords } from './text.js';

/** Words that ask, or join, rather than name what is asked about. */
const ASKING =
  /^(?:how|long|many|much|soon|often|far|should|must|may|might|need|get|take|happen|happens|if|whether|unless|until|once|then|than|so|but|because|while|after|before|into|over|under|between|during|within|without|through|多久|多长|多长时间|多少|几|什么时候|何时|为什么|哪里|哪儿|是否|能否|怎么办|需要|应该|分别|具体|以后|能不能|还|吗|呢)$/i;

/** A question's own key words: neither stopwords nor asking words nor bare numbers. */
export function topicWords(query: string): string[] {
  return contentWords(query).filter((word) => !isAskingWord(word) && !/^\d+$/.test(word));
}

/** A word that asks or joins ("how", "happen", 多久) rather than names what is asked about. */
export function isAskingWord(word: string): boolean {
  return ASKING.test(word);
}

/** A name or model number ("X1", "Aurora"): written the same in both languages, so never translated. */
export function isName(word: string): boolean {
  return /\d/.test(word) || (!containsCjk(word) && /[A-Z]/.test(word));
}

/**
 * The question's key words in the other language, by word: for each topic
 * word that is not a name and that the glossary translates, its
 * translations (see common/glossary).
 */
export function translatedTopicWords(query: string): string[][] {
  return translationsForSearch(topicWords(sentenceCaseLowered(query)).filter((word) => !isName(word)));
}

/** The text with the capital that only opens a sentence lowered ("Refund policy?" → "refund policy?"): it names nothing. */
function sentenceCaseLowered(text: string): string {
  return text.replace(/(^|[.?!]\s+)([A-Z])(?=[a-z]+\b)/g, (_, lead: string, capital: string) => lead + capital.toLowerCase());
}
