import { Inject, Injectable } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { z } from 'zod';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { FAST_MODEL } from '../../../models/model-tokens.js';
import { MAX_QUERY_LENGTH } from '../bounded-query.js';
import { MAX_SUB_QUESTIONS } from '../../../trace/trace.protocol.js';
import { Complexity, judgeComplexity } from '../complexity.js';
import { JudgeDefinition, JudgeTrace, ModelJudge } from './judge.js';
import { InvalidJudgementError } from './model-judgement.js';
import { Metrics } from '../../../observability/metrics.js';

const ComplexitySchema = z.object({
  complexity: z.enum(['simple', 'complex']).describe('"complex" when the question asks several things that need separate searches'),
  complexity_reason: z.string().max(500).describe('One sentence'),
  sub_questions: z
    .array(z.string().max(MAX_QUERY_LENGTH))
    .max(MAX_SUB_QUESTIONS)
    .describe(`With "complex": each thing asked, as a self-contained question (at most ${MAX_SUB_QUESTIONS}); empty otherwise`),
});

const INSTRUCTIONS =
  'You decide how to search a knowledge base (product manuals, policies) for a user\'s question. It is "simple" when ' +
  'it asks one thing, which one search answers, and "complex" when it asks several separate things that need separate ' +
  `searches. For a complex question write each thing as a self-contained question in the user's language, at most ` +
  `${MAX_SUB_QUESTIONS}, in the order asked; for a simple one give no sub-questions. Add a one-sentence reason.`;

/** A complexity verdict and who gave it (trace fields `complexity_judge`, `complexity_fallback_reason`). */
export type JudgedComplexity = Complexity & JudgeTrace<'complexity'>;

const COMPLEXITY: JudgeDefinition<string, typeof ComplexitySchema, Complexity, 'complexity'> = {
  name: 'complexity',
  functionName: 'judge_complexity',
  schema: ComplexitySchema,
  instructions: INSTRUCTIONS,
  prompt: (question) => `Question: ${question}`,
  verdict: verdictOf,
  local: judgeComplexity,
};

/**
 * Judges whether a question asks one thing or several, and splits it into
 * at most MAX_SUB_QUESTIONS sub-questions: by the fast model (structured
 * output) when a real model is configured, by `judgeComplexity` offline and
 * when the model fails.
 */
@Injectable()
export class ComplexityJudge extends ModelJudge<string, typeof ComplexitySchema, Complexity, 'complexity'> {
  constructor(@Inject(FAST_MODEL) model: BaseChatModel, @Inject(APP_CONFIG) config: AppConfig, metrics?: Metrics) {
    super(COMPLEXITY, model, config, metrics);
  }
}

/** The model's verdict as the knowledge tool uses it: a complex question has at least two distinct sub-questions. */
function verdictOf(answer: z.infer<typeof ComplexitySchema>): Complexity {
  const reason = answer.complexity_reason.trim();
  if (!reason) throw new InvalidJudgementError('empty complexity_reason');
  if (answer.complexity === 'simple') return { complexity: 'simple', complexity_reason: reason, sub_questions: [] };
  const subQuestions = [...new Set(answer.sub_questions.map((q) => q.trim()).filter(Boolean))];
  if (subQuestions.length < 2) throw new InvalidJudgementError(`"complex" with ${subQuestions.length} sub-question(s)`);
  return { complexity: 'complex', complexity_reason: reason, sub_questions: subQuestions };
}
