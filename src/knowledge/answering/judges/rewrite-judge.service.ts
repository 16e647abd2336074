import { Inject, Injectable, Logger } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { z } from 'zod';
import { clip } from '../../../common/text.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { FAST_MODEL } from '../../../models/model-tokens.js';
import { MAX_QUERY_LENGTH } from '../bounded-query.js';
import type { RetrievalHit } from '../../retrieval/retrieval.service.js';
import { Rewrite, rewriteQuery } from '../rewrite.js';
import { InvalidJudgementError, JudgeSource, judgeWithFallback, ModelJudgement } from './model-judgement.js';

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
export interface JudgedRewrite extends Rewrite {
  rewrite_judge: JudgeSource;
  rewrite_fallback_reason: string | null;
}

/**
 * Rewrites a query whose evidence was weak: the fast model (structured
 * output) chooses step-back or HyDE and writes the question or passage when
 * a real model is configured; `rewriteQuery` does offline and when the model fails.
 */
@Injectable()
export class RewriteJudge {
  private readonly logger = new Logger(RewriteJudge.name);
  private readonly model: ModelJudgement<typeof RewriteSchema> | null;

  constructor(
    @Inject(FAST_MODEL) model: BaseChatModel,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.model = config.llm.provider === 'local' ? null : new ModelJudgement(model, RewriteSchema, 'rewrite_query', config.llm.judgeTimeoutMs);
  }

  async rewrite(query: string, weakHits: readonly RetrievalHit[]): Promise<JudgedRewrite> {
    const model = this.model;
    const found = weakHits.length
      ? `Passages found:\n${weakHits.map((hit, i) => `[${i + 1}] (${hit.source}) ${clip(hit.text, 300)}`).join('\n')}`
      : 'Nothing was found.';
    const judged = await judgeWithFallback<Rewrite>(
      'rewrite',
      model ? async () => rewriteOf(await model.ask(INSTRUCTIONS, `Question: ${query}\n\n${found}`)) : null,
      () => rewriteQuery(query),
      this.logger,
    );
    return { ...judged.value, rewrite_judge: judged.judge, rewrite_fallback_reason: judged.fallbackReason };
  }
}

function rewriteOf(answer: z.infer<typeof RewriteSchema>): Rewrite {
  const text = answer.text.trim();
  if (!text) throw new InvalidJudgementError('empty rewrite text');
  return answer.rewrite_mode === 'step_back'
    ? { rewrite_mode: 'step_back', rewritten_query: text, step_back_question: text, hypothetical_doc: null }
    : { rewrite_mode: 'hyde', rewritten_query: text, step_back_question: null, hypothetical_doc: text };
}
