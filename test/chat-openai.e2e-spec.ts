import { Injectable, Module } from '@nestjs/common';
import { tool } from '@langchain/core/tools';
import request from 'supertest';
import { z } from 'zod';
import { AgentTool, AgentToolPlugin } from '../src/agent/tools/agent-tool.js';
import { KNOWLEDGE_BUDGET_SPENT } from '../src/agent/tools/knowledge/knowledge-search.tool.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeOpenAIServer, gradeVerdict } from './support/fake-openai-server.js';
import { readSse } from './support/sse-client.js';

/** A third tool, added the way a team would: its own module, nothing else changed. */
@AgentTool()
@Injectable()
class ClockTool implements AgentToolPlugin {
  readonly name = 'current_time';
  readonly promptRules = ['- For the current time somewhere, call current_time with its IANA time zone.'];
  create() {
    return tool(async ({ timezone }: { timezone: string }) => `It is 09:30 in ${timezone}.`, {
      name: this.name,
      description: 'The current time in a time zone',
      schema: z.object({ timezone: z.string() }),
    });
  }
}

@Module({ providers: [ClockTool] })
class ClockToolModule {}

describe('Chat turns with the openai provider against a fake OpenAI-compatible server', () => {
  const llm = new FakeOpenAIServer();
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp(llm.appEnv({ LLM_TIMEOUT_MS: '1500' }), undefined, [ClockToolModule]);
    base = await t.listen();
  });
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });
  beforeEach(() => llm.reset());

  const chat = (user: string, body: object) => request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send(body);

  it('runs a tool round trip: the model calls knowledge_search, then answers from the passages', async () => {
    llm.play({ toolCalls: [{ name: 'knowledge_search', args: { query: 'Aurora X2 warranty' } }] }, gradeVerdict(), { content: 'Three years [aurora-x2-mesh-manual.md].' });
    const res = await chat(uniqueUser(), { message: 'How long is the Aurora X2 warranty?' }).expect(200);
    expect(res.body.response).toBe('Three years [aurora-x2-mesh-manual.md].');
    expect(res.body.rag_trace).toMatchObject({ tool_used: true, query: 'Aurora X2 warranty' });

    // The main model, the fast model judging complexity (unscripted here: the local judge answers) and grading, the main model.
    expect(llm.requests).toHaveLength(4);
    expect(llm.requests.map((r) => r.stream)).toEqual([false, false, false, false]); // a sync turn asks for whole answers
    expect(llm.requests.map((r) => r.model)).toEqual(['main-model', 'fast-model', 'fast-model', 'main-model']);
    expect(llm.requests.map((r) => r.forcedFunction)).toEqual([null, 'judge_complexity', 'grade_evidence', null]); // the judges' structured output
    expect(res.body.rag_trace).toMatchObject({ grade_route: 'answer', grade_reason: 'The passages answer it.', grade_confidence: 0.9 });
    expect(res.body.rag_trace).toMatchObject({ grade_judge: 'model', complexity_judge: 'local_fallback' });
    expect(llm.requests[0].tools.map((t) => t.function.name).sort()).toEqual(['current_time', 'get_weather', 'knowledge_search']);
    expect(llm.requests[0].messages[0].role).toBe('system');
    // Each tool's own prompt rules, the added module's included, make up the system prompt.
    expect(llm.requests[0].messages[0].content).toContain('- For the current time somewhere, call current_time with its IANA time zone.');
    expect(llm.requests[0].messages[0].content).toContain('call knowledge_search once with the full question');
    const toolMessage = llm.requests[3].messages.find((m) => m.role === 'tool');
    expect(JSON.parse(toolMessage!.content as string).chunks[0].source).toBe('aurora-x2-mesh-manual.md');
  });

  it("streams the model's tokens and the tool events", async () => {
    llm.play({ toolCalls: [{ name: 'current_time', args: { timezone: 'Asia/Shanghai' } }] }, { content: 'It is half past nine in Shanghai.' });
    const stream = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(uniqueUser()), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: '上海现在几点？' }),
    });
    expect(llm.requests.every((r) => r.stream)).toBe(true);
    const tokens = stream.events.filter((e) => e.event === 'token').map((e) => e.data.text);
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.join('')).toBe('It is half past nine in Shanghai.');
    expect(stream.events.filter((e) => e.event === 'tool').map((e) => [e.data.name, e.data.phase, e.data.summary])).toEqual([
      ['current_time', 'start', { args: { timezone: 'Asia/Shanghai' } }],
      ['current_time', 'end', { output: 'It is 09:30 in Asia/Shanghai.', truncated: false }],
    ]);
    expect(stream.events.at(-1)).toMatchObject({ event: 'done', data: { response: 'It is half past nine in Shanghai.' } });
  });

  it('gives a second knowledge search in the same turn the budget message', async () => {
    llm.play(
      {
        toolCalls: [
          { name: 'knowledge_search', args: { query: 'returns' } },
          { name: 'knowledge_search', args: { query: 'refunds' } },
        ],
      },
      gradeVerdict(),
      { content: 'Thirty days.' },
    );
    const res = await chat(uniqueUser(), { message: 'What is the return policy and how do refunds work?' }).expect(200);
    expect(res.body.rag_trace.query).toBe('returns');
    const answering = llm.requests.filter((r) => r.model === 'main-model').at(-1)!;
    const toolContents = answering.messages.filter((m) => m.role === 'tool').map((m) => m.content as string);
    expect(toolContents).toHaveLength(2);
    expect(JSON.parse(toolContents[0]).query).toBe('returns');
    expect(toolContents[1]).toBe(KNOWLEDGE_BUDGET_SPENT);
  });

  it('lets the fast model split a question into the sub-questions the knowledge tool searches', async () => {
    const question = 'Can I return a router, and how long is the X2 warranty?';
    llm.play({ toolCalls: [{ name: 'knowledge_search', args: { query: question } }] }, { content: 'Both answered.' });
    llm.playFor('judge_complexity', {
      toolCalls: [
        {
          name: 'judge_complexity',
          args: {
            complexity: 'complex',
            complexity_reason: 'Two separate things.',
            sub_questions: ['What is the return policy for routers?', 'How long is the Aurora X2 warranty?'],
          },
        },
      ],
    });
    const res = await chat(uniqueUser('split'), { message: question }).expect(200);
    expect(res.body.rag_trace).toMatchObject({
      complexity: 'complex',
      complexity_judge: 'model',
      complexity_reason: 'Two separate things.',
      sub_questions: ['What is the return policy for routers?', 'How long is the Aurora X2 warranty?'],
      retrieval_stage: 'subquestion_merge',
      sub_agent_count: 2,
    });
    expect(res.body.rag_trace.sub_traces.map((sub: { query: string }) => sub.query)).toEqual(['What is the return policy for routers?', 'How long is the Aurora X2 warranty?']);
  });

  it('lets the LLM judge pause the turn for a choice, and resumes it with the answer', async () => {
    const user = uniqueUser('judge');
    llm.play(
      { toolCalls: [{ name: 'knowledge_search', args: { query: 'How long is the warranty?' } }] },
      gradeVerdict({
        grade_route: 'clarify',
        evidence_status: 'needs_choice',
        evidence_ambiguity: 'needs_choice',
        options: ['Aurora X1', 'Aurora X2'],
        grade_reason: 'Two products.',
      }),
    );
    const paused = await chat(user, { message: 'How long is the warranty?' }).expect(200);
    expect(paused.body.pending_hitl).toMatchObject({ hitl_type: 'choose', options: ['Aurora X1', 'Aurora X2'] });
    expect(paused.body.rag_trace).toMatchObject({ grade_reason: 'Two products.', clarification_options: ['Aurora X1', 'Aurora X2'] });

    llm.reset();
    llm.play(gradeVerdict(), { content: 'The Aurora X2 has a three-year warranty.' });
    const resumed = await chat(user, { message: 'Aurora X2', session_id: paused.body.session_id }).expect(200);
    expect(resumed.body.response).toBe('The Aurora X2 has a three-year warranty.');
    expect(resumed.body.rag_trace).toMatchObject({ hitl_resumed: true, user_supplement: 'Aurora X2', retrieval_stage: 'hitl' });
    // On resume the paused question is not graded again: one verdict, one answer.
    expect(llm.requests.map((r) => r.model)).toEqual(['fast-model', 'main-model']);
  });

  it('keeps the original question across clarification rounds and answers after the last allowed round', async () => {
    const user = uniqueUser('rounds');
    const unclear = gradeVerdict({ grade_route: 'clarify', evidence_status: 'needs_clarification', evidence_ambiguity: 'missing_condition', grade_reason: 'Which product?' });
    llm.play({ toolCalls: [{ name: 'knowledge_search', args: { query: 'How long is the warranty?' } }] }, unclear);
    const first = await chat(user, { message: 'How long is the warranty?' }).expect(200);
    expect(first.body.pending_hitl).toMatchObject({ hitl_type: 'clarify', original_question: 'How long is the warranty?', user_supplement: null });
    const session = first.body.session_id;

    llm.reset();
    llm.play(unclear); // round 2: still unclear
    const second = await chat(user, { message: 'the router', session_id: session }).expect(200);
    expect(second.body.pending_hitl).toMatchObject({ original_question: 'How long is the warranty?', user_supplement: 'the router' });
    expect(second.body.pending_hitl.task_id).toBe(first.body.pending_hitl.task_id);

    llm.reset();
    llm.play(unclear, { content: 'Two years for the Aurora X1 router.' }); // no third question: it answers
    const third = await chat(user, { message: 'Aurora X1', session_id: session }).expect(200);
    expect(third.body.pending_hitl).toBeNull();
    expect(third.body.response).toBe('Two years for the Aurora X1 router.');
    expect(third.body.rag_trace).toMatchObject({ hitl_resumed: true, user_supplement: 'the router / Aurora X1', query: 'How long is the warranty?' });
  });

  it('falls back to the local judge when the LLM judge fails, and says so', async () => {
    llm.play(
      { toolCalls: [{ name: 'knowledge_search', args: { query: 'How do I reset the Aurora X1 router?' } }] },
      { status: 500, error: 'judge down' },
      { content: 'Hold reset.' },
    );
    const res = await chat(uniqueUser(), { message: 'How do I reset the Aurora X1 router?' }).expect(200);
    expect(res.body.rag_trace.grade_reason).toMatch(/local judge: the LLM judge failed/);
  });

  it('answers 502 when the model fails, keeps the human message, and the session stays usable', async () => {
    const user = uniqueUser('fail');
    llm.play({ status: 500, error: 'upstream exploded' });
    const failed = await chat(user, { message: 'Will this fail?' }).expect(502);
    expect(failed.body.message).toMatch(/^The model failed \(its endpoint answered HTTP 500\)\. Your message was saved/);
    // The endpoint's own error text is for the log, not for the client.
    expect(failed.body.message).not.toContain('upstream exploded');
    expect(failed.body.code).toBe('model_error');
    const [{ session_id }] = await t.dataSource.query(`SELECT session_id FROM chat_runs WHERE user_id = $1`, [user]);
    const messages = (await request(t.app.getHttpServer()).get(`/api/sessions/${session_id}/messages`).set(t.auth(user)).expect(200)).body.messages;
    expect(messages.map((m: { type: string; content: string }) => [m.type, m.content])).toEqual([['human', 'Will this fail?']]);

    llm.play({ content: 'Back to normal.' });
    const next = await chat(user, { message: 'Try again', session_id }).expect(200);
    expect(next.body.response).toBe('Back to normal.');
    const [{ status }] = await t.dataSource.query(`SELECT status FROM chat_runs WHERE user_id = $1 ORDER BY created_at LIMIT 1`, [user]);
    expect(status).toBe('error');
  });

  it('answers 504 when the model does not answer in time, and streams an error event', async () => {
    llm.play({ hang: true });
    const res = await chat(uniqueUser(), { message: 'Are you there?' }).expect(504);
    expect(res.body.message).toMatch(/did not answer in time/);

    llm.play({ hang: true });
    const stream = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(uniqueUser()), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'Still there?' }),
    });
    expect(stream.events.map((e) => e.event)).toEqual(['metadata', 'error']);
    expect(stream.events[1].data).toEqual({ code: 'model_timeout', message: expect.stringMatching(/did not answer in time.*Your message was saved/), message_saved: true });
  });
});
