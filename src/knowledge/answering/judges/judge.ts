import { Logger } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { z } from 'zod';
import type { AppConfig } from '../../../config/app-config.js';
import { modelIdentity } from '../../../models/chat-models.js';
import type { Metrics } from '../../../observability/metrics.js';
import { JudgeSource, judgeWithFallback, ModelJudgement } from './model-judgement.js';

/** What a judgement is: how the fast model is asked it, how its answer is read, and the local judge that answers without it. */
export interface JudgeDefinition<I, S extends z.ZodObject, T, N extends string> {
  /** Names the judgement in the log and in its trace fields, `<name>_judge` and `<name>_fallback_reason`. */
  name: N;
  /** The function the model calls with its answer (structured output). */
  functionName: string;
  schema: S;
  /** The system prompt. */
  instructions: string;
  /** The model's user message for `input`; null when the local judge answers whatever the provider (nothing to judge). */
  prompt: (input: I) => string | null;
  /** The model's answer to `input` as the judgement; throws InvalidJudgementError when it cannot be used. */
  verdict: (answer: z.infer<S>, input: I) => T;
  /** The local judge: offline (LLM_PROVIDER=local), and when the model fails. */
  local: (input: I) => T;
  /** How the local judge's answer reads when it stands in for a failed model (unchanged when not given). */
  fallback?: (value: T) => T;
}

/** The trace fields that say who judged: `<name>_judge` and `<name>_fallback_reason`. */
export type JudgeTrace<N extends string> = { [K in `${N}_judge`]: JudgeSource } & { [K in `${N}_fallback_reason`]: string | null };

/**
 * One judgement asked of the fast model with a local fallback: the model
 * answers (structured output, within LLM_JUDGE_TIMEOUT_MS) when a real one
 * is configured; the local judge answers offline and when the model fails,
 * times out or answers something unusable, and the trace says why.
 */
export class ModelJudge<I, S extends z.ZodObject, T, N extends string> {
  protected readonly logger = new Logger(this.constructor.name);
  private readonly model: ModelJudgement<S> | null;

  constructor(
    private readonly definition: JudgeDefinition<I, S, T, N>,
    model: BaseChatModel,
    config: AppConfig,
    metrics?: Metrics,
  ) {
    this.model =
      config.llm.provider === 'local'
        ? null
        : new ModelJudgement(model, definition.schema, definition.functionName, config.llm.judgeTimeoutMs, modelIdentity(config.llm, 'fast'), metrics);
  }

  async judge(input: I): Promise<T & JudgeTrace<N>> {
    const { name, instructions, prompt, verdict, local, fallback } = this.definition;
    const model = this.model;
    const message = model ? prompt(input) : null;
    const judged = await judgeWithFallback<T>(
      name,
      model && message !== null ? async () => verdict(await model.ask(instructions, message), input) : null,
      () => local(input),
      this.logger,
    );
    const value = judged.judge === 'local_fallback' && fallback ? fallback(judged.value) : judged.value;
    return { ...value, [`${name}_judge`]: judged.judge, [`${name}_fallback_reason`]: judged.fallbackReason } as T & JudgeTrace<N>;
  }
}
