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
 * Which option an answer to a choice picks: by its title, its number (1-based)
 * or its file's name (with or without extension, or as words); failing
 * those, the one option whose title or file words hold the answer as a word
 * ("X2" for "Aurora X2 Mesh System — User Manual"). -1 when it picks none.
 */
function chosenIndex(answer: string, options: string[], sources: string[]): number {
  const wanted = fold(answer);
  if (!wanted || options.length === 0) return -1;
  const number = /^\d+$/.test(wanted) ? Number(wanted) : 0;
  if (number >= 1 && number <= options.length) return number - 1;
  const formsOf = (i: number) => {
    const source = sources[i] ?? '';
    return [options[i], ...(source ? [source, source.replace(/\.[^.]+$/, ''), titleOf(source)] : [])].map(fold);
  };
  const exact = options.findIndex((_, i) => formsOf(i).includes(wanted));
  if (exact >= 0) return exact;
  const asWord = new RegExp(`(^|[^\\p{L}\\p{N}])${wanted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}])`, 'u');
  const holding = options.map((_, i) => i).filter((i) => formsOf(i).some((form) => asWord.test(form)));
  return holding.length === 1 ? holding[0] : -1;
}

function listOf(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/**
 * What an answer to a choice is searched as: the option it picks (see
 * chosenIndex) becomes the title and the file's words (what the grading
 * tells documents apart by); any other answer stays as it is.
 */
export function chosenOption(answer: string, question: { options?: unknown; option_sources?: unknown }): string {
  const options = listOf(question.options);
  const sources = listOf(question.option_sources);
  const index = chosenIndex(answer, options, sources);
  if (index < 0) return answer;
  const source = sources[index];
  return source ? `${options[index]} ${titleOf(source)}` : options[index];
}

/** The files of the options an answer to a choice set aside (none when it picks no option, or the options name no files). */
export function setAsideSources(answer: string, question: { options?: unknown; option_sources?: unknown }): string[] {
  const options = listOf(question.options);
  const sources = listOf(question.option_sources);
  const index = chosenIndex(answer, options, sources);
  if (index < 0 || !sources[index]) return [];
  return sources.filter((source, i) => i !== index && source && source !== sources[index]);
}
