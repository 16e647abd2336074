import { wordSegments } from '../common/segments.js';
import { topicWords } from '../common/topic-words.js';

/**
 * What a pronoun of a later part of the question stands for, for the offline model (see local-compose): the later
 * part's terms then include what the part before it named.
 */

/** An English pronoun that stands for what an earlier part of the question named ("…, and how long do they last?"); not "IT". */
const ENGLISH_PRONOUN = /\b(?:[Tt]hey|[Tt]hem|[Tt]heir|[Ii]ts?|[Tt]hose|[Tt]hese)\b/;
/** An "it" that stands for nothing: "is it true that…", "does it take…". */
const EMPTY_IT = /\b(?:is|was|isn't|wasn't) it (?:true|possible|ok|okay|worth|necessary|safe|allowed|normal|right|better|best|fine|too)\b|\b(?:it takes?|does it take)\b/gi;

/** Whether a part says a pronoun for what an earlier part named: in Chinese a word 它 (它们) or 其 alone, not 其他, 其实, 尤其. */
function refersBack(part: string): boolean {
  if (ENGLISH_PRONOUN.test(part.replace(EMPTY_IT, ' '))) return true;
  if (!/[它其]/.test(part)) return false;
  for (const { segment } of wordSegments(part)) if (segment === '其' || segment === '它' || segment === '它们') return true;
  return false;
}

/**
 * What a pronoun of a later part stands for: the key words of the part before it (see topicWords), or nothing for a
 * part without one. "How many points do I earn per yuan, and how long do they last?" asks how long points last.
 */
export function partReferent(parts: readonly string[], index: number): string {
  return index > 0 && refersBack(parts[index]) ? topicWords(parts[index - 1]).join(' ') : '';
}
