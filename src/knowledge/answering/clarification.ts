import { containsCjk } from '../../common/text.js';
import type { Grade } from '../retrieval/grading.js';

function listedAsAlternatives(options: string[]): string {
  return options.length <= 2 ? options.join(' or ') : `${options.slice(0, -1).join(', ')} or ${options.at(-1)}`;
}

/** The question put to the user when the evidence needs a choice or a missing condition. */
export function clarificationPrompt(question: string, grade: Grade): string {
  const zh = containsCjk(question);
  if (grade.evidence_ambiguity === 'needs_choice' && grade.options.length > 0) {
    return zh
      ? `资料中有多个可能的对象：${grade.options.join('、')}。你指的是哪一个？`
      : `The documents cover more than one thing this could mean: ${listedAsAlternatives(grade.options)}. Which one do you mean?`;
  }
  return zh ? '为了准确回答，请补充更多信息（例如具体的产品或条件）。' : 'To answer precisely I need more detail (for example the exact product or condition).';
}
