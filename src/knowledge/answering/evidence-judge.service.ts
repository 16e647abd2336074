import { Inject, Injectable } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { z } from 'zod';
import { FAST_MODEL } from '../../models/model-tokens.js';
import { clip } from '../../common/text.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { Grade, gradeEvidence, titleOf } from '../retrieval/grading.js';
import { JudgeDefinition, JudgeTrace, ModelJudge } from './judges/judge.js';
import type { RetrievalHit } from '../retrieval/retrieval.service.js';
import { Metrics } from '../../observability/metrics.js';

const GradeSchema = z.object({
  grade_route: z.enum(['answer', 'clarify']),
  evidence_status: z.enum(['sufficient', 'partial', 'needs_clarification', 'needs_choice']),
  evidence_relevance: z.enum(['strong', 'weak']),
  evidence_answerability: z.enum(['sufficient', 'partial', 'none']),
  evidence_ambiguity: z.enum(['missing_condition', 'needs_choice']).nullable(),
  grade_confidence: z.number().min(0).max(1),
  grade_reason: z.string().max(500),
  options: z.array(z.string().max(200)).max(6).describe('With needs_choice: the things the user must choose between'),
});

const INSTRUCTIONS =
  'You grade retrieved evidence for a question. Decide whether it can be answered from the passages (route "answer") ' +
  'or whether the user must clarify (route "clarify"): "needs_choice" when the passages describe several distinct things ' +
  'the question does not tell apart (list them in options), "missing_condition" when a needed condition is missing. ' +
  'Judge relevance (strong/weak), answerability (sufficient/partial/none), a confidence in 0..1 and a one-sentence reason.';

/** A grade and who gave it (trace fields `grade_judge`, `grade_fallback_reason`). */
export type JudgedGrade = Grade & JudgeTrace<'grade'>;

/** The question and the evidence retrieved for it. */
interface Evidence {
  question: string;
  hits: RetrievalHit[];
}

const fileNameForms = (source: string) => [source, source.replace(/\.[^.]+$/, ''), titleOf(source)].map((form) => form.trim().toLowerCase());

/** The retrieved file a model's option names (its file name, with or without extension, or as words), else ''. */
function sourceNamed(option: string, hits: RetrievalHit[]): string {
  const wanted = option.trim().toLowerCase();
  return hits.find((hit) => fileNameForms(hit.source).includes(wanted))?.source ?? '';
}

const GRADE: JudgeDefinition<Evidence, typeof GradeSchema, Grade, 'grade'> = {
  name: 'grade',
  functionName: 'grade_evidence',
  schema: GradeSchema,
  instructions: INSTRUCTIONS,
  // Nothing retrieved is graded locally whatever the provider: there is nothing to judge.
  prompt: ({ question, hits }) =>
    hits.length > 0
      ? `Question: ${question}\n\nPassages:\n${hits.map((hit, i) => `[${i + 1}] (${hit.source}${hit.page ? ` p.${hit.page}` : ''}) ${clip(hit.text, 800)}`).join('\n')}`
      : null,
  verdict: (answer, { hits }) => ({ ...answer, option_sources: answer.options.map((option) => sourceNamed(option, hits)) }),
  local: ({ question, hits }) => gradeEvidence(question, hits),
  fallback: (grade) => ({ ...grade, grade_reason: `${grade.grade_reason} (local judge: the LLM judge failed)` }),
};

/**
 * Grades evidence: by scores and coverage offline (LLM_PROVIDER=local), by
 * the fast model with structured output when a real model is configured. A
 * model failure falls back to the local judge, and the trace says why.
 * Nothing retrieved is graded locally whatever the provider: there is nothing to judge.
 */
@Injectable()
export class EvidenceJudge extends ModelJudge<Evidence, typeof GradeSchema, Grade, 'grade'> {
  constructor(@Inject(FAST_MODEL) model: BaseChatModel, @Inject(APP_CONFIG) config: AppConfig, metrics?: Metrics) {
    super(GRADE, model, config, metrics);
  }

  grade(question: string, hits: RetrievalHit[]): Promise<JudgedGrade> {
    return this.judge({ question, hits });
  }
}
