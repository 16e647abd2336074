import { containsCjk, tokenize } from './text.js';

const EN_SPLIT = /\s*(?:[?;]+|,?\s+and\s+(?=(?:what|how|which|who|when|where|why|is|are|does|do|can)\b)|,?\s+(?:and\s+)?also\s+)\s*/i;
const ZH_SPLIT = /\s*(?:[？?；;]+|，?(?:以及|还有|另外|并且|同时))\s*/;

/**
 * The things a question asks, in the order asked: the clauses between
 * question marks, or joined by "and what/how…", "also", 以及, 还有, 另外…,
 * each kept when it has at least two search terms of its own. One part (the
 * question itself, trimmed) when it asks one thing.
 */
export function questionParts(question: string): string[] {
  const parts = question
    .split(containsCjk(question) ? ZH_SPLIT : EN_SPLIT)
    .map((part) => part.trim().replace(/^[,，、]+|[,，、]+$/g, ''))
    .filter((part) => tokenize(part).length >= 2);
  return parts.length >= 2 ? parts : [question.trim()];
}
