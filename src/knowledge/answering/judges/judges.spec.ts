import { Logger } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { OutputParserException } from '@langchain/core/output_parsers';
import type { AppConfig } from '../../../config/app-config.js';
import { judgeComplexity } from '../complexity.js';
import { EvidenceJudge } from '../evidence-judge.service.js';
import { gradeEvidence } from '../../retrieval/grading.js';
import { rewriteQuery } from '../rewrite.js';
import { ComplexityJudge } from './complexity-judge.service.js';
import { judgeWithFallback } from './model-judgement.js';
import { RewriteJudge } from './rewrite-judge.service.js';

// The judges warn when they fall back; the tests expect that.
Logger.overrideLogger(false);
const quiet = new Logger('test');

interface Call {
  functionName: string;
  messages: Array<{ role: string; content: string }>;
  signal?: AbortSignal;
}

/** A chat model whose structured output answers with `reply` (a value, a rejection, or a promise that never settles). */
function fakeModel(reply: (call: Call) => Promise<unknown>): { model: BaseChatModel; calls: Call[] } {
  const calls: Call[] = [];
  const model = {
    withStructuredOutput: (_schema: unknown, options: { name: string }) => ({
      invoke: (messages: Call['messages'], config: { signal?: AbortSignal }) => {
        const call = { functionName: options.name, messages, signal: config?.signal };
        calls.push(call);
        return reply(call);
      },
    }),
  } as unknown as BaseChatModel;
  return { model, calls };
}

const openai = (timeoutMs = 1000) => ({ llm: { provider: 'openai', timeoutMs, judgeTimeoutMs: timeoutMs } }) as AppConfig;
const local = { llm: { provider: 'local', timeoutMs: 1000, judgeTimeoutMs: 1000 } } as AppConfig;
const hit = (text: string) => ({ chunk_id: '1', collection_id: '00000000-0000-4000-8000-000000000001', source: 'router.md', page: null, text, score: 0.03, rerank_score: 0.2 });

describe('judgeWithFallback', () => {
  it('answers locally without a model, with the model when it answers, and locally with a reason when it fails', async () => {
    expect(await judgeWithFallback('x', null, () => 'local', quiet)).toEqual({ value: 'local', judge: 'local', fallbackReason: null });
    expect(
      await judgeWithFallback(
        'x',
        async () => 'model',
        () => 'local',
        quiet,
      ),
    ).toEqual({ value: 'model', judge: 'model', fallbackReason: null });
    const failed = await judgeWithFallback(
      'x',
      () => Promise.reject(new Error('500 upstream\n  exploded')),
      () => 'local',
      quiet,
    );
    // The endpoint's own words stay in the log: the trace, which clients read, gets our words and the HTTP status.
    expect(failed).toEqual({ value: 'local', judge: 'local_fallback', fallbackReason: 'model error: the call failed' });
    const rejected = await judgeWithFallback(
      'x',
      () => Promise.reject(Object.assign(new Error('upstream exploded at 10.0.0.1'), { status: 500 })),
      () => 'local',
      quiet,
    );
    expect(rejected.fallbackReason).toBe('model error: the endpoint answered HTTP 500');
    const invalid = await judgeWithFallback(
      'x',
      () => Promise.reject(new OutputParserException('x'.repeat(500))),
      () => 'local',
      quiet,
    );
    expect(invalid.fallbackReason).toBe('invalid output: the reply held no usable structured answer');
  });
});

describe('the model judges', () => {
  it('gives up on a model that does not answer within the timeout, cancels its request, and answers locally', async () => {
    const { model, calls } = fakeModel(() => new Promise(() => undefined));
    const verdict = await new ComplexityJudge(model, openai(50)).judge('What is the return policy? And how long is the warranty?');
    expect(verdict).toEqual({
      ...judgeComplexity('What is the return policy? And how long is the warranty?'),
      complexity_judge: 'local_fallback',
      complexity_fallback_reason: 'timeout: no answer within 50 ms',
    });
    expect(calls[0].signal?.aborted).toBe(true);
  });

  it("uses the model's complexity verdict and sub-questions, distinct and trimmed", async () => {
    const { model, calls } = fakeModel(async () => ({
      complexity: 'complex',
      complexity_reason: 'Two products.',
      sub_questions: [' How long is the X1 warranty? ', 'How long is the X2 warranty?', 'How long is the X2 warranty?'],
    }));
    expect(await new ComplexityJudge(model, openai()).judge('X1 vs X2 warranty')).toEqual({
      complexity: 'complex',
      complexity_reason: 'Two products.',
      sub_questions: ['How long is the X1 warranty?', 'How long is the X2 warranty?'],
      complexity_judge: 'model',
      complexity_fallback_reason: null,
    });
    expect(calls.map((c) => c.functionName)).toEqual(['judge_complexity']);
    expect(calls[0].messages[1].content).toContain('X1 vs X2 warranty');
  });

  it('refuses a "complex" verdict with fewer than two sub-questions, and answers locally', async () => {
    const { model } = fakeModel(async () => ({ complexity: 'complex', complexity_reason: 'Hm.', sub_questions: ['Only one?'] }));
    expect(await new ComplexityJudge(model, openai()).judge('Only one?')).toMatchObject({
      complexity: 'simple',
      complexity_judge: 'local_fallback',
      complexity_fallback_reason: 'invalid output: "complex" with 1 sub-question(s)',
    });
  });

  it('treats a reply without the function call as invalid output', async () => {
    const { model } = fakeModel(async () => undefined);
    const grade = await new EvidenceJudge(model, openai()).grade('How do I reset the router?', [hit('Hold the reset button.')]);
    expect(grade).toMatchObject({ grade_judge: 'local_fallback', grade_fallback_reason: 'invalid output: no valid grade_evidence call in the reply' });
    expect(grade.grade_reason).toBe(`${gradeEvidence('How do I reset the router?', [hit('Hold the reset button.')]).grade_reason} (local judge: the LLM judge failed)`);
  });

  it("maps the model's rewrite onto the trace fields: step-back question or hypothetical passage", async () => {
    const stepBack = fakeModel(async () => ({ rewrite_mode: 'step_back', text: 'What is the warranty policy?' }));
    expect(await new RewriteJudge(stepBack.model, openai()).rewrite('X2 warranty in Tokyo?', [hit('Tokyo hotels.')])).toEqual({
      rewrite_mode: 'step_back',
      rewritten_query: 'What is the warranty policy?',
      step_back_question: 'What is the warranty policy?',
      hypothetical_doc: null,
      rewrite_judge: 'model',
      rewrite_fallback_reason: null,
    });
    expect(stepBack.calls[0].messages[1].content).toMatch(/X2 warranty in Tokyo\?[\s\S]*Tokyo hotels\./);
    const hyde = fakeModel(async () => ({ rewrite_mode: 'hyde', text: 'The warranty lasts three years.' }));
    expect(await new RewriteJudge(hyde.model, openai()).rewrite('warranty?', [])).toMatchObject({
      rewrite_mode: 'hyde',
      rewritten_query: 'The warranty lasts three years.',
      step_back_question: null,
      hypothetical_doc: 'The warranty lasts three years.',
    });
  });

  it('answers every judgement locally with LLM_PROVIDER=local, never asking the model', async () => {
    const { model, calls } = fakeModel(async () => ({}));
    const question = 'What is the return policy and how long is the warranty?';
    expect(await new ComplexityJudge(model, local).judge(question)).toEqual({ ...judgeComplexity(question), complexity_judge: 'local', complexity_fallback_reason: null });
    expect(await new RewriteJudge(model, local).rewrite(question, [])).toEqual({ ...rewriteQuery(question), rewrite_judge: 'local', rewrite_fallback_reason: null });
    expect(await new EvidenceJudge(model, local).grade(question, [hit('Returns within 30 days.')])).toEqual({
      ...gradeEvidence(question, [hit('Returns within 30 days.')]),
      grade_judge: 'local',
      grade_fallback_reason: null,
    });
    expect(calls).toEqual([]);
  });
});
