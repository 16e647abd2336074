import { judgeComplexity } from '../src/knowledge/answering/complexity.js';
import { gradeEvidence } from '../src/knowledge/retrieval/grading.js';
import { ComplexityJudge } from '../src/knowledge/answering/judges/complexity-judge.service.js';
import { KnowledgeFlow } from '../src/knowledge/answering/knowledge-flow.service.js';
import { RetrievalService } from '../src/knowledge/retrieval/retrieval.service.js';
import { rewriteQuery } from '../src/knowledge/answering/rewrite.js';
import { SubQuestionFanOut } from '../src/knowledge/answering/sub-question-fanout.service.js';
import { normalizeRagTrace } from '../src/trace/trace.normalizer.js';
import { FakeOpenAIServer, FakeReply } from './support/fake-openai-server.js';
import { createTestApp, TestApp } from './support/test-app.js';
import { DEFAULT_SCOPE } from './support/collections.js';

const JUDGE_TIMEOUT_MS = 1000;

/** The fast model's structured answer: a call of the function the judge forces. */
const call = (name: string, args: Record<string, unknown> | string): FakeReply => ({ toolCalls: [{ name, args }] });
const grade = (overrides: Record<string, unknown> = {}) =>
  call('grade_evidence', {
    grade_route: 'answer',
    evidence_status: 'sufficient',
    evidence_relevance: 'strong',
    evidence_answerability: 'sufficient',
    evidence_ambiguity: null,
    grade_confidence: 0.93,
    grade_reason: 'The model read the passages: they answer it.',
    options: [],
    ...overrides,
  });
const weakGrade = () => grade({ evidence_status: 'partial', evidence_relevance: 'weak', evidence_answerability: 'partial', grade_confidence: 0.4, grade_reason: 'Off topic.' });

/** What a failing model does, and the reason the trace gives for the fallback. */
const FAILURES: Array<{ kind: string; reply: (name: string) => FakeReply; reason: RegExp }> = [
  { kind: 'HTTP 500', reply: () => ({ status: 500, error: 'judge down' }), reason: /^model error: the endpoint answered HTTP 500$/ },
  { kind: 'arguments that are not JSON', reply: (name) => call(name, '{"not": json'), reason: /^invalid output: / },
  { kind: 'arguments outside the schema', reply: (name) => call(name, { unexpected: true }), reason: /^invalid output: / },
  { kind: 'text instead of the call', reply: () => ({ content: 'I think it is simple.' }), reason: /^invalid output: / },
  { kind: 'no answer within the timeout', reply: () => ({ hang: true }), reason: new RegExp(`^timeout: no answer within ${JUDGE_TIMEOUT_MS} ms$`) },
];

describe('Knowledge judgements by the fast model, with the local judges as fallback', () => {
  const llm = new FakeOpenAIServer();
  let t: TestApp;
  let flow: KnowledgeFlow;
  let retrieval: RetrievalService;
  const topK = 4;
  const forced = () => llm.requests.map((r) => r.forcedFunction);

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp(llm.appEnv({ LLM_JUDGE_TIMEOUT_MS: String(JUDGE_TIMEOUT_MS) }));
    flow = t.app.get(KnowledgeFlow);
    retrieval = t.app.get(RetrievalService);
  });
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });
  beforeEach(() => llm.reset());

  it("splits a question as the model says, and fans out over the model's sub-questions", async () => {
    // No question marks or "and what…": the local judge sees one question here.
    const question = 'Tokyo hotel limit plus Aurora X2 warranty length';
    expect(judgeComplexity(question).complexity).toBe('simple');
    const subQuestions = ['What is the nightly hotel limit in Tokyo?', 'How long is the Aurora X2 warranty?'];
    llm.playFor('judge_complexity', call('judge_complexity', { complexity: 'complex', complexity_reason: 'Two unrelated things.', sub_questions: subQuestions }));
    llm.playFor('grade_evidence', grade(), grade(), grade());

    const verdict = await t.app.get(ComplexityJudge).judge(question);
    expect(verdict).toEqual({
      complexity: 'complex',
      complexity_reason: 'Two unrelated things.',
      sub_questions: subQuestions,
      complexity_judge: 'model',
      complexity_fallback_reason: null,
    });
    expect(llm.requests[0]).toMatchObject({ model: 'fast-model', forcedFunction: 'judge_complexity' });
    expect(llm.requests[0].messages.at(-1)!.content).toContain(question);

    const steps: string[] = [];
    const fanOut = await t.app.get(SubQuestionFanOut).run(question, verdict.sub_questions, topK, DEFAULT_SCOPE, (stage, label) => steps.push(`${stage}: ${label}`));
    expect(steps).toEqual(expect.arrayContaining(subQuestions.map((q, i) => `sub_agent: Sub-question ${i + 1}: ${q}`)));
    expect(fanOut.subTraces.map((sub) => sub.query)).toEqual(subQuestions);
    expect(fanOut.subTraces.map((sub) => (sub.final_chunks as Array<{ source: string }>)[0].source)).toEqual(['travel-expense-policy.md', 'aurora-x2-mesh-manual.md']);
    // Each sub-agent retrieved its sub-question: its evidence is what retrieval finds for it.
    for (const [i, sub] of fanOut.subTraces.entries()) {
      expect(sub.final_chunks).toEqual((await retrieval.search(subQuestions[i], topK, { scope: DEFAULT_SCOPE })).hits);
      expect(sub).toMatchObject({ grade_judge: 'model', grade_reason: 'The model read the passages: they answer it.' });
    }
    expect(fanOut.grade).toMatchObject({ grade_judge: 'model', grade_confidence: 0.93 });
    expect(forced()).toEqual(['judge_complexity', 'grade_evidence', 'grade_evidence', 'grade_evidence']);
  });

  it('grades as the model says, from the passages it was shown', async () => {
    const question = 'How long is the warranty?';
    const options = ['Aurora X1 router', 'Aurora X2 mesh'];
    llm.playFor(
      'grade_evidence',
      grade({ grade_route: 'clarify', evidence_status: 'needs_choice', evidence_ambiguity: 'needs_choice', grade_confidence: 0.71, grade_reason: 'Two products.', options }),
    );
    const result = await flow.run(question, topK, DEFAULT_SCOPE);
    expect(result.grade).toMatchObject({ grade_route: 'clarify', options, grade_judge: 'model', grade_fallback_reason: null });
    expect(result.trace).toMatchObject({
      grade_route: 'clarify',
      evidence_status: 'needs_choice',
      grade_confidence: 0.71,
      grade_reason: 'Two products.',
      grade_judge: 'model',
      grade_fallback_reason: null,
      clarification_options: options,
      retrieval_stage: 'initial',
      rewrite_mode: null,
    });
    expect(forced()).toEqual(['grade_evidence']);
    const prompt = llm.requests[0].messages.at(-1)!.content as string;
    expect(prompt).toContain(question);
    for (const hit of result.hits) expect(prompt).toContain(`(${hit.source}`);
    // The judge fields survive normalization (they are declared in the trace protocol).
    expect(normalizeRagTrace(result.trace)).toMatchObject({ grade_judge: 'model', grade_fallback_reason: null });
  });

  it.each([
    ['step-back question', { rewrite_mode: 'step_back', text: 'What is the warranty period of the Aurora X2 mesh system?' }],
    ['hypothetical passage', { rewrite_mode: 'hyde', text: 'The Aurora X2 mesh system comes with a three-year warranty.' }],
  ])("searches again with the model's %s when the evidence is weak", async (_label, rewrite) => {
    const question = 'X2 guarantee?';
    llm.playFor('grade_evidence', weakGrade(), grade());
    llm.playFor('rewrite_query', call('rewrite_query', rewrite));
    const steps: Array<[string, string, unknown]> = [];
    const result = await flow.run(question, topK, DEFAULT_SCOPE, (stage, label, details) => steps.push([stage, label, details]));

    expect(forced()).toEqual(['grade_evidence', 'rewrite_query', 'grade_evidence']);
    expect(llm.requests[1].messages.at(-1)!.content).toContain(question);
    const stepBack = rewrite.rewrite_mode === 'step_back';
    expect(result.trace).toMatchObject({
      rewrite_mode: rewrite.rewrite_mode,
      rewritten_query: rewrite.text,
      step_back_question: stepBack ? rewrite.text : null,
      hypothetical_doc: stepBack ? null : rewrite.text,
      rewrite_judge: 'model',
      rewrite_fallback_reason: null,
      // The second grade (the model's "sufficient") beats the first, so the rewrite's evidence is kept.
      retrieval_stage: 'rewrite',
      grade_reason: 'The model read the passages: they answer it.',
    });
    const second = await retrieval.search(rewrite.text, topK, { scope: DEFAULT_SCOPE });
    expect(result.trace.rewrite_chunks).toEqual(second.hits);
    expect(result.hits).toEqual(second.hits);
    expect(Object.keys(result.trace.timings!)).toEqual(expect.arrayContaining(['recall', 'rewrite_recall']));
    expect(steps.filter(([stage]) => stage === 'rewrite')).toEqual([
      ['rewrite', stepBack ? 'Asking a step-back question' : 'Searching with a hypothetical answer', { mode: rewrite.rewrite_mode }],
    ]);
    expect(steps.filter(([stage]) => stage === 'grade').map(([, label]) => label)).toEqual(['Evidence partial', 'Evidence after rewrite sufficient']);
  });

  describe.each(FAILURES)('when the model fails ($kind)', ({ reply, reason }) => {
    it('judges complexity locally, and the trace says why', async () => {
      const question = 'What is the hotel limit in Tokyo and how long is the Aurora X2 warranty?';
      llm.playFor('judge_complexity', reply('judge_complexity'));
      const verdict = await t.app.get(ComplexityJudge).judge(question);
      expect(verdict).toMatchObject({ ...judgeComplexity(question), complexity_judge: 'local_fallback' });
      expect(verdict.complexity_fallback_reason).toMatch(reason);
      expect(normalizeRagTrace(verdict)).toMatchObject({ complexity_judge: 'local_fallback', complexity_fallback_reason: verdict.complexity_fallback_reason });
    });

    it('grades locally, and the trace says why', async () => {
      const question = 'How do I reset the Aurora X1 router to factory settings?';
      const hits = (await retrieval.search(question, topK, { scope: DEFAULT_SCOPE })).hits;
      const local = gradeEvidence(question, hits);
      expect(local.evidence_relevance).toBe('strong'); // so no rewrite follows
      llm.playFor('grade_evidence', reply('grade_evidence'));
      const result = await flow.run(question, topK, DEFAULT_SCOPE);
      expect(forced()).toEqual(['grade_evidence']);
      const { options: _options, option_sources: _sources, ...localFields } = local;
      expect(result.trace).toMatchObject({
        ...localFields,
        grade_reason: `${local.grade_reason} (local judge: the LLM judge failed)`,
        grade_judge: 'local_fallback',
      });
      expect(result.trace.grade_fallback_reason).toMatch(reason);
    });

    it('rewrites locally, and the trace says why', async () => {
      const question = 'X2 guarantee?';
      llm.playFor('grade_evidence', weakGrade(), weakGrade());
      llm.playFor('rewrite_query', reply('rewrite_query'));
      const result = await flow.run(question, topK, DEFAULT_SCOPE);
      expect(forced()).toEqual(['grade_evidence', 'rewrite_query', 'grade_evidence']);
      const local = rewriteQuery(question);
      expect(result.trace).toMatchObject({ ...local, rewrite_judge: 'local_fallback', retrieval_stage: 'initial' });
      expect(result.trace.rewrite_fallback_reason).toMatch(reason);
      expect(result.trace.rewrite_chunks).toEqual((await retrieval.search(local.rewritten_query, topK, { scope: DEFAULT_SCOPE })).hits);
    });
  });
});

describe('Knowledge judgements with LLM_PROVIDER=local', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LLM_PROVIDER: 'local' });
  });
  afterAll(() => t.close());

  it('answers every judgement with the local judge, and the trace says so', async () => {
    const question = 'Tell me about the lounge access rules for travellers';
    expect(await t.app.get(ComplexityJudge).judge(question)).toEqual({ ...judgeComplexity(question), complexity_judge: 'local', complexity_fallback_reason: null });
    const result = await t.app.get(KnowledgeFlow).run(question, 4, DEFAULT_SCOPE);
    // The corpus says little about lounges: the evidence is weak, so the query is rewritten too.
    expect(result.trace).toMatchObject({ ...rewriteQuery(question), grade_judge: 'local', grade_fallback_reason: null, rewrite_judge: 'local', rewrite_fallback_reason: null });
  });
});
