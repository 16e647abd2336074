import { Inject, Injectable } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { z } from 'zod';
import { clip } from '../../../common/text.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { FAST_MODEL } from '../../../models/model-tokens.js';
import { MAX_QUERY_LENGTH } from '../bounded-query.js';
import type { RetrievalHit } from '../../retrieval/retrieval.service.js';
import { Rewrite, rewriteQuery } from '../rewrite.js';
import { JudgeDefinition, JudgeTrace, ModelJudge } from './judge.js';
import { InvalidJudgementError } from './model-judgement.js';
import { Metrics } from '../../../observability/metrics.js';

const RewriteSchema = z.object({
  rewrite_mode: z.enum(['step_back', 'hyde']),
  text: z.string().max(MAX_QUERY_LENGTH).describe('With step_back: the step-back question; with hyde: the hypothetical passage'),
});

const INSTRUCTIONS =
  'The passages a knowledge base (product manuals, policies) returned for a question were weakly relevant. Rewrite ' +
  'the search once, choosing the technique that fits: "step_back", a more general question about the underlying topic, ' +
  'rule or concept (for specific or detailed questions), or "hyde", a short hypothetical passage stating the answer the ' +
  'way the documents would (for short or vague questions). Write it in the language of the question.';

/** A rewrite and who wrote it (trace fields `rewrite_judge`, `rewrite_fallback_reason`). */
export type JudgedRewrite = Rewrite & JudgeTrace<'rewrite'>;

/** A query whose evidence was weak, with the passages found for it. */
interface WeakSearch {
  query: string;
  weakHits: readonly RetrievalHit[];
}

const REWRITE: JudgeDefinition<WeakSearch, typeof RewriteSchema, Rewrite, 'rewrite'> = {
  name: 'rewrite',
  functionName: 'rewrite_query',
  schema: RewriteSchema,
  instructions: INSTRUCTIONS,
  prompt: ({ query, weakHits }) => {
    const found = weakHits.length ? `Passages found:\n${weakHits.map((hit, i) => `[${i + 1}] (${hit.source}) ${clip(hit.text, 300)}`).join('\n')}` : 'Nothing was found.';
    return `Question: ${query}\n\n${found}`;
  },
  verdict: rewriteOf,
  local: ({ query, weakHits }) => rewriteQuery(query, weakHits),
};

/**
 * Rewrites a query whose evidence was weak: the fast model (structured
 * output) chooses step-back or HyDE and writes the question or passage when
 * a real model is configured; `rewriteQuery` does offline and when the model fails.
 */
@Injectable()
export class RewriteJudge extends ModelJudge<WeakSearch, typeof RewriteSchema, Rewrite, 'rewrite'> {
  constructor(@Inject(FAST_MODEL) model: BaseChatModel, @Inject(APP_CONFIG) config: AppConfig, metrics?: Metrics) {
    super(REWRITE, model, config, metrics);
  }

  rewrite(query: string, weakHits: readonly RetrievalHit[]): Promise<JudgedRewrite> {
    return this.judge({ query, weakHits });
  }
}

function rewriteOf(answer: z.infer<typeof RewriteSchema>): Rewrite {
  const text = answer.text.trim();
  if (!text) throw new InvalidJudgementError('empty rewrite text');
  return answer.rewrite_mode === 'step_back'
    ? { rewrite_mode: 'step_back', rewritten_query: text, step_back_question: text, hypothetical_doc: null }
    : { rewrite_mode: 'hyde', rewritten_query: text, step_back_question: null, hypothetical_doc: text };
}
