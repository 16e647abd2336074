import { questionParts } from '../../common/question-parts.js';
import { containsCjk } from '../../common/text.js';
import { MAX_SUB_QUESTIONS } from '../../trace/trace.protocol.js';

export interface Complexity {
  complexity: 'simple' | 'complex';
  complexity_reason: string;
  sub_questions: string[];
}

/**
 * The local complexity judge: a question that asks several things (several
 * question marks, or clauses joined by "and what/how…", 以及, 还有, 另外…;
 * see questionParts) is complex and split into at most four sub-questions,
 * each with at least two search terms of its own.
 */
export function judgeComplexity(question: string): Complexity {
  const zh = containsCjk(question);
  const parts = questionParts(question);
  if (parts.length < 2) {
    return { complexity: 'simple', complexity_reason: 'One question.', sub_questions: [] };
  }
  const sub = parts.slice(0, MAX_SUB_QUESTIONS).map((part) => (/[?？]$/.test(part) ? part : `${part}${zh ? '？' : '?'}`));
  return {
    complexity: 'complex',
    complexity_reason: `The question asks ${parts.length} things${parts.length > MAX_SUB_QUESTIONS ? ` (the first ${MAX_SUB_QUESTIONS} are searched)` : ''}.`,
    sub_questions: sub,
  };
}
