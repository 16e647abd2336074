import { containsCjk, tokenize } from '../../common/text.js';

export interface Rewrite {
  rewrite_mode: 'step_back' | 'hyde';
  rewritten_query: string;
  step_back_question: string | null;
  hypothetical_doc: string | null;
}

/**
 * The local rewriter for weak evidence. A long question gets a step-back
 * question (its key terms, without the specifics); a short one gets a
 * hypothetical passage (HyDE) that states the question as an answer would,
 * so both recall legs see answer-like wording.
 */
export function rewriteQuery(query: string): Rewrite {
  const zh = containsCjk(query);
  const words = [...new Set(tokenize(query))].filter((w) => !/^\d+$/.test(w));
  const long = zh ? query.replace(/\s/g, '').length > 12 : query.trim().split(/\s+/).length > 6;
  if (long) {
    const core = words.filter((w) => !/\d/.test(w)).slice(0, 6);
    const question = zh ? `关于${core.join('、')}的一般规定是什么？` : `What are the general facts about ${core.join(' ')}?`;
    return { rewrite_mode: 'step_back', rewritten_query: question, step_back_question: question, hypothetical_doc: null };
  }
  const doc = zh
    ? `关于${words.join('')}：以下说明介绍了${words.join('、')}的相关规定、步骤和期限。`
    : `About ${words.join(' ')}: this section explains the ${words.join(' ')} rules, steps and time limits.`;
  return { rewrite_mode: 'hyde', rewritten_query: doc, step_back_question: null, hypothetical_doc: doc };
}
