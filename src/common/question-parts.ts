import { containsCjk, tokenize } from './text.js';

const EN_SPLIT = /\s*(?:[?;]+|,?\s+and\s+(?=(?:what|how|which|who|when|where|why|is|are|does|do|can)\b)|,?\s+(?:and\s+)?also\s+)\s*/i;
const ZH_SPLIT = /\s*(?:[？?；;]+|，?(?:以及|还有|另外|并且|同时))\s*/;

const COMMA = /\s*[,，]\s*/;
/** A Chinese clause that asks: it holds a question word or particle (几秒, 会怎样, 吗). */
const ZH_ASKING = /吗|呢|几|多少|多久|多长|什么|怎|如何|哪|谁|是否|能否|可否|有没有|是不是|会不会|能不能|可不可以/;
/** An English clause that asks: it opens with a question word or an inverted verb ("how long…", "does it…"). */
const EN_ASKING = /^(?:what|how|which|who|whom|whose|when|where|why|is|are|was|were|does|do|did|can|could|will|would|should|may|must|has|have)\b/i;

/**
 * A clause list cut at its commas where a clause that asks follows clauses
 * that already asked ("X2 的 reset 要按几秒，main node reset 了会怎样"): each
 * piece asks one thing. A clause that asks nothing stays with its neighbours,
 * as the condition or the subject of what is asked ("如果商品有质量问题，运费谁出",
 * "If my order used a coupon, do I get it back").
 */
function atAskingCommas(part: string, zh: boolean): string[] {
  const asks = (clause: string) => (zh ? ZH_ASKING.test(clause) : EN_ASKING.test(clause));
  const pieces: Array<{ clauses: string[]; asked: boolean }> = [];
  for (const clause of part.split(COMMA)) {
    const current = pieces.at(-1);
    if (current && !(current.asked && asks(clause))) {
      current.clauses.push(clause);
      current.asked ||= asks(clause);
    } else pieces.push({ clauses: [clause], asked: asks(clause) });
  }
  return pieces.map((piece) => piece.clauses.join(zh ? '，' : ', '));
}

/**
 * The things a question asks, in the order asked: the clauses between
 * question marks, joined by "and what/how…", "also", 以及, 还有, 另外…, or
 * by a comma between clauses that each ask (see atAskingCommas), each kept
 * when it has at least two search terms of its own. One part (the question
 * itself, trimmed) when it asks one thing.
 */
export function questionParts(question: string): string[] {
  const zh = containsCjk(question);
  const parts = question
    .split(zh ? ZH_SPLIT : EN_SPLIT)
    .flatMap((part) => atAskingCommas(part, zh))
    .map((part) => part.trim().replace(/^[,，、]+|[,，、]+$/g, ''))
    .filter((part) => tokenize(part).length >= 2);
  return parts.length >= 2 ? parts : [question.trim()];
}
