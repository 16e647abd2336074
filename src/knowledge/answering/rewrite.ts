import { standardForm } from '../../common/standard-form.js';
import { englishUnitWords } from '../../common/bilingual-units.js';
import { translateForSearch } from '../../common/glossary.js';
import { containsCjk } from '../../common/text.js';
import { isName, topicWords } from '../../common/topic-words.js';

export interface Rewrite {
  rewrite_mode: 'step_back' | 'hyde';
  rewritten_query: string;
  step_back_question: string | null;
  hypothetical_doc: string | null;
}

/** The question as a topic: without its question mark and the polite or asking words it opens with. */
function asTopic(query: string): string {
  return query
    .trim()
    .replace(/[?？!！。.]+$/u, '')
    .replace(/^(?:请问|我想知道|想问一下|please tell me|tell me|i want to know)[,，\s]*/iu, '')
    .trim();
}

/**
 * The local rewriter for weak evidence. A long question gets a step-back
 * question (its key words, without the specifics); a short one gets a
 * hypothetical passage (HyDE) that states the question as an answer would,
 * so both recall legs see answer-like wording. Both read as the question's
 * own words, in its language.
 */
export function rewriteQuery(query: string, weakPassages: ReadonlyArray<{ text: string }> = []): Rewrite {
  const zh = containsCjk(query);
  // Passages came back, none in the question's language: the documents are in the other one, so the rewrite asks in it.
  if (weakPassages.length > 0 && !weakPassages.some((passage) => containsCjk(passage.text) === zh)) {
    const translated = translatedRewrite(query);
    if (translated) return translated;
  }
  return inQuestionLanguage(zh, topicWords(query), query);
}

/**
 * The question in the other language, for documents written in it: a
 * hypothetical passage of its names (model numbers, capitalised names) and
 * its key words as the glossary translates them (see common/glossary) and
 * the units it asks in (几天: days); null
 * when the glossary knows none of them.
 */
export function translatedRewrite(query: string): Rewrite | null {
  // Translated from the standard form, the glossary's (會員積分 as 会员积分).
  const read = standardForm(query);
  const zh = containsCjk(read);
  const words = topicWords(read);
  const translated = translateForSearch(
    words.filter((word) => !isName(word)),
    MAX_TRANSLATED_WORDS,
  );
  if (translated.length === 0) return null;
  const topic = [...words.filter(isName), ...translated, ...englishUnitWords(read)];
  const doc = zh ? `About ${topic.join(' ')}: the rules.` : `关于${topic.join('、')}的规定。`;
  return { rewrite_mode: 'hyde', rewritten_query: doc, step_back_question: null, hypothetical_doc: doc };
}

/** Translated words a rewrite adds at most: beyond them, rare senses dilute the search. */
const MAX_TRANSLATED_WORDS = 24;

/** The step-back question or HyDE passage in the question's language. */
function inQuestionLanguage(zh: boolean, words: string[], query: string): Rewrite {
  const long = zh ? query.replace(/\s/g, '').length > 12 : query.trim().split(/\s+/).length > 6;
  const core = words.filter((w) => !/\d/.test(w)).slice(0, 6);
  if (long && core.length > 0) {
    const question = zh ? `关于${core.join('、')}的一般规定是什么？` : `What are the general rules about ${core.join(' ')}?`;
    return { rewrite_mode: 'step_back', rewritten_query: question, step_back_question: question, hypothetical_doc: null };
  }
  // The key words name the topic: run together in Chinese (会员积分过期), spaced in English; the question itself when it has none.
  const topic = words.length > 0 ? words.join(zh ? '' : ' ') : asTopic(query);
  // Little besides the topic: words no document holds ("以下说明介绍了") only dilute the match of the ones that count.
  const doc = zh ? `关于${topic}：${topic}的规定、步骤和期限。` : `About ${topic}: this section explains the ${topic} rules, steps and time limits.`;
  return { rewrite_mode: 'hyde', rewritten_query: doc, step_back_question: null, hypothetical_doc: doc };
}
