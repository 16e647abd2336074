import { containsCjk } from '../../common/text.js';
import { type Grade, titleOf } from '../retrieval/grading.js';

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

const fold = (text: string) => text.normalize('NFKC').trim().toLowerCase();

/**
 * What an answer to a choice is searched as: the option it picks, by its
 * title, its number (1-based) or its file's name (with or without extension,
 * or as words), becomes the title and the file's words (what the grading
 * tells documents apart by); any other answer stays as it is.
 */
export function chosenOption(answer: string, question: { options?: unknown; option_sources?: unknown }): string {
  const options = Array.isArray(question.options) ? question.options.map(String) : [];
  const sources = Array.isArray(question.option_sources) ? question.option_sources.map(String) : [];
  const wanted = fold(answer);
  if (!wanted || options.length === 0) return answer;
  const number = /^\d+$/.test(wanted) ? Number(wanted) : 0;
  const index =
    number >= 1 && number <= options.length
      ? number - 1
      : options.findIndex((option, i) => {
          const source = sources[i] ?? '';
          const forms = [option, ...(source ? [source, source.replace(/\.[^.]+$/, ''), titleOf(source)] : [])];
          return forms.some((form) => fold(form) === wanted);
        });
  if (index < 0) return answer;
  const source = sources[index];
  return source ? `${options[index]} ${titleOf(source)}` : options[index];
}
