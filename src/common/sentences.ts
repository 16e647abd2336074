import { sentenceSegments } from './segments.js';

/**
 * Sentences of a text in Chinese or English, by Unicode's sentence rules
 * (Intl.Segmenter): a full stop in a decimal ("2.4 GHz"), a version, or an
 * abbreviation followed by lower case ("2 a.m. and 4 a.m.") does not end a
 * sentence; 。！？ do; a semicolon does not; a line break does.
 *
 * Unicode's rules cannot tell an abbreviation followed by a capital ("e.g.
 * The X1", "Dr. Lee") from the end of a sentence; those in ABBREVIATIONS are
 * joined back to what follows.
 */

/** Abbreviations that end a sentence far less often than they stand before a capital inside one. */
const ABBREVIATIONS = new Set(['approx', 'ca', 'cf', 'dr', 'e.g', 'eg', 'fig', 'i.e', 'ie', 'jr', 'mr', 'mrs', 'ms', 'no', 'nos', 'nr', 'pp', 'prof', 'sr', 'st', 'vol', 'vs']);
const LAST_WORD = /(?:^|[\s(（"“'‘])([\p{L}.]+)\.$/u;

function endsWithAbbreviation(segment: string): boolean {
  const word = LAST_WORD.exec(segment.trimEnd())?.[1];
  return word !== undefined && ABBREVIATIONS.has(word.toLowerCase());
}

/** The sentences of `text`, trimmed, each with its closing punctuation; empty and one-character pieces left out. */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const { segment } of sentenceSegments(text)) {
    pending += segment;
    // A line break always ends the sentence; an abbreviation before it does not hold the next line.
    if (!/\n\s*$/.test(segment) && endsWithAbbreviation(segment)) continue;
    out.push(pending);
    pending = '';
  }
  if (pending) out.push(pending);
  return out.map((sentence) => sentence.trim()).filter((sentence) => sentence.length > 1);
}
