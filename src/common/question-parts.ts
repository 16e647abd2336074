import { standardForm } from './standard-form.js';
import { containsCjk, tokenize } from './text.js';
import { topicWords } from './topic-words.js';

const EN_SPLIT = /\s*(?:[?;]+|,?\s+and\s+(?=(?:what|how|which|who|when|where|why|is|are|does|do|can)\b)|,?\s+(?:and\s+)?also\s+)\s*/i;
const ZH_SPLIT = /\s*(?:[？?；;]+|，?(?:以及|还有|還有|另外|并且|並且|同时|同時))\s*/;

const COMMA = /\s*[,，]\s*/;
/** A Chinese clause that asks: it holds a question word or particle (几秒, 会怎样, 吗), read in the standard form. */
const ZH_ASKING = /吗|呢|几|多少|多久|多长|什么|怎|如何|哪|谁|是否|能否|可否|有没有|是不是|会不会|能不能|可不可以/;
/** Question words that do not ask: 几乎 ("almost"), 没什么 ("nothing much"), 怎么说 ("so to speak"), 你知道吗 ("you know"). */
const ZH_NOT_ASKING = /几乎|没什么|怎么说|[你您]?知道吗/g;
/** A clause of concession asks nothing, whatever question word it holds (无论什么原因, 不管多少钱). */
const ZH_CONCESSION = /无论|不管|不论|哪怕|即使/;
/** An English clause that asks: it opens with a question word or an inverted verb ("how long…", "does it…"). */
const EN_ASKING = /^(?:what|how|which|who|whom|whose|when|where|why|is|are|was|were|does|do|did|can|could|will|would|should|may|must|has|have)\b/i;
/** An English clause that asks a question of its own after a comma: one that opens with a question word (an inverted verb there goes on the clause before it: "When I reset it, are my settings gone?"). */
const EN_ASKING_AGAIN = /^(?:what|how|which|who|whom|whose|when|where|why)\b/i;

function zhAsks(clause: string): boolean {
  const read = standardForm(clause);
  return !ZH_CONCESSION.test(read) && ZH_ASKING.test(read.replace(ZH_NOT_ASKING, ''));
}

/**
 * A clause list cut at its commas where a clause that asks follows clauses
 * that already asked ("X2 的 reset 要按几秒，main node reset 了会怎样"): each
 * piece asks one thing. A clause that asks nothing stays with its neighbours,
 * as the condition or the subject of what is asked ("如果商品有质量问题，运费谁出",
 * "If my order used a coupon, do I get it back").
 */
function atAskingCommas(part: string, zh: boolean): string[] {
  const asks = (clause: string) => (zh ? zhAsks(clause) : EN_ASKING.test(clause));
  const asksAgain = (clause: string) => (zh ? zhAsks(clause) : EN_ASKING_AGAIN.test(clause));
  const pieces: Array<{ clauses: string[]; asked: boolean }> = [];
  for (const clause of part.split(COMMA)) {
    const current = pieces.at(-1);
    if (current && !(current.asked && asksAgain(clause))) {
      current.clauses.push(clause);
      current.asked ||= asks(clause);
    } else pieces.push({ clauses: [clause], asked: asks(clause) });
  }
  // A piece that names nothing ("为什么", "好吗", "Why") asks about what its neighbour names: it stays with it.
  const joined: Array<{ clauses: string[] }> = [];
  for (const piece of pieces) {
    const previous = joined.at(-1);
    if (previous && (!namesSomething(piece.clauses) || !namesSomething(previous.clauses))) previous.clauses.push(...piece.clauses);
    else joined.push({ clauses: [...piece.clauses] });
  }
  return joined.map((piece) => piece.clauses.join(zh ? '，' : ', '));
}

function namesSomething(clauses: readonly string[]): boolean {
  return topicWords(standardForm(clauses.join(' '))).length > 0;
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
