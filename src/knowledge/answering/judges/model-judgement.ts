import type { Logger } from '@nestjs/common';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { OutputParserException } from '@langchain/core/output_parsers';
import type { Runnable } from '@langchain/core/runnables';
import type { z } from 'zod';
import { clip } from '../../../common/text.js';
import { withTimeout } from '../../../common/with-timeout.js';
import { modelEndpointFailure } from '../../../models/model-errors.js';
import type { Metrics } from '../../../observability/metrics.js';
import { ModelCall, traceModelCall } from '../../../observability/spans.js';
import type { JUDGE_SOURCES } from '../../../trace/trace.protocol.js';

/** Who answered a judgement: `model`, `local` (no model configured) or `local_fallback` (the model failed). */
export type JudgeSource = (typeof JUDGE_SOURCES)[number];

/** Longest fallback reason kept in the trace. */
export const FALLBACK_REASON_MAX_LENGTH = 200;

export interface Judged<T> {
  value: T;
  judge: JudgeSource;
  /** Why the local judge answered for the model; null when it did not. */
  fallbackReason: string | null;
}

/** The model answered, but not with something the judgement can use. */
export class InvalidJudgementError extends Error {}

class JudgementTimeoutError extends Error {}

/**
 * One judgement asked of the fast model: a structured-output function call
 * (`method: 'functionCalling'`), bounded by its own timeout, which also
 * cancels the request.
 */
export class ModelJudgement<S extends z.ZodObject> {
  private readonly runnable: Runnable<BaseLanguageModelInput, z.infer<S>>;

  constructor(
    model: BaseChatModel,
    schema: S,
    readonly functionName: string,
    private readonly timeoutMs: number,
    /** The provider and model, as its `chat` span names them. */
    private readonly identity: ModelCall = { provider: 'unknown', model: 'unknown' },
    private readonly metrics?: Metrics,
  ) {
    this.runnable = model.withStructuredOutput<z.infer<S>>(schema, { name: functionName, method: 'functionCalling' });
  }

  async ask(instructions: string, input: string): Promise<z.infer<S>> {
    const controller = new AbortController();
    const call = () => this.call(controller, instructions, input);
    const verdict = await (this.metrics ? this.metrics.modelCall({ operation: 'chat', ...this.identity }, call) : call());
    // The parser yields nothing when the reply holds no call of the function (text instead, or unparseable arguments).
    if (verdict == null) throw new InvalidJudgementError(`no valid ${this.functionName} call in the reply`);
    return verdict;
  }

  private call(controller: AbortController, instructions: string, input: string): Promise<z.infer<S>> {
    return traceModelCall(this.identity, () =>
      withTimeout(
        this.runnable.invoke(
          [
            { role: 'system', content: instructions },
            { role: 'user', content: input },
          ],
          { signal: controller.signal },
        ),
        this.timeoutMs,
        () => {
          controller.abort();
          return new JudgementTimeoutError(`no answer within ${this.timeoutMs} ms`);
        },
      ),
    );
  }
}

/**
 * Why the local judge answered, for the trace (which clients read): the kind
 * of failure in our words (the HTTP status the model endpoint answered, or
 * what happened to the connection: modelEndpointFailure), never the
 * endpoint's or the library's own text (that goes to the log).
 */
function fallbackReason(error: unknown): string {
  if (error instanceof JudgementTimeoutError) return clip(`timeout: ${error.message}`, FALLBACK_REASON_MAX_LENGTH);
  // Our own words about what was wrong with the reply; a parser's words quote the reply itself.
  if (error instanceof InvalidJudgementError) return clip(`invalid output: ${error.message}`, FALLBACK_REASON_MAX_LENGTH);
  if (error instanceof OutputParserException) return 'invalid output: the reply held no usable structured answer';
  const failure = modelEndpointFailure(error);
  return failure ? `model error: the endpoint ${failure}` : 'model error: the call failed';
}

/**
 * Answers a judgement with the model when one is configured (`askModel` is
 * not null), and with the local judge when there is none or the model
 * fails, times out or answers something unusable; says which answered, and why.
 */
export async function judgeWithFallback<T>(judgement: string, askModel: (() => Promise<T>) | null, local: () => T, logger: Logger): Promise<Judged<T>> {
  if (!askModel) return { value: local(), judge: 'local', fallbackReason: null };
  try {
    return { value: await askModel(), judge: 'model', fallbackReason: null };
  } catch (error) {
    const reason = fallbackReason(error);
    logger.warn({ err: error }, `${judgement}: the model failed (${reason}); the local judge answered`);
    return { value: local(), judge: 'local_fallback', fallbackReason: reason };
  }
}
