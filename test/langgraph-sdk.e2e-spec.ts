import { createClient } from '@keyv/redis';
import { Client } from '@langchain/langgraph-sdk';
import request from 'supertest';
import { ASSISTANT_ID } from '../src/protocols/langgraph/langgraph-state.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_REDIS_URL } from './support/test-env.js';

/** A streamed part as the SDK yields it. */
interface Part {
  id?: string;
  event: string;
  data: any;
}

const WARRANTY = 'How long is the Aurora X2 warranty?';
const AMBIGUOUS = 'How long is the Aurora warranty?';
const WEATHER = 'What is the weather in Paris?';

/** The LangGraph Server API at /langgraph, driven by the real `@langchain/langgraph-sdk` Client on two instances. */
describe('LangGraph Server API through @langchain/langgraph-sdk', () => {
  const weather = new FakeWeatherServer();
  let t: TestApp;
  let other: TestApp;
  let base: string;
  let otherBase: string;

  beforeAll(async () => {
    await weather.start();
    const env = { WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '0' };
    t = await createTestApp(env);
    other = await createTestApp(env);
    base = await t.listen();
    otherBase = await other.listen();
  }, 90_000);
  afterAll(async () => {
    weather.release();
    await t?.close();
    await other?.close();
    await weather.stop();
  });

  const client = (user: string, at = base) => new Client({ apiUrl: `${at}/langgraph`, defaultHeaders: t.auth(user), callerOptions: { maxRetries: 0 } });
  const human = (content: string) => ({ messages: [{ type: 'human', content }] });
  const collect = async (stream: AsyncIterable<Part>): Promise<Part[]> => {
    const parts: Part[] = [];
    for await (const part of stream) parts.push(part);
    return parts;
  };
  const statusOf = async (attempt: Promise<unknown>): Promise<number> =>
    attempt.then(
      () => 200,
      (error: { status?: number }) => error.status ?? -1,
    );
  const transcript = async (user: string, session: string) =>
    (await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200)).body.messages as Array<{
      type: string;
      content: string;
      status: string;
    }>;
  const lastAi = (values: any) => (values.messages as Array<{ type: string; content: string }>).filter((m) => m.type === 'ai').at(-1)?.content ?? '';
  /** Starts a background weather run on the thread and resolves once it is held inside the weather tool. */
  const heldRun = async (lg: Client, threadId: string) => {
    weather.hold();
    const arrived = weather.nextRequest();
    const run = await lg.runs.create(threadId, 'agent', { input: human(WEATHER) });
    await arrived;
    return run;
  };

  it('describes its one assistant: search, get by graph id, schemas and graph', async () => {
    const lg = client(uniqueUser('lg-assist'));
    const found = await lg.assistants.search({ graphId: 'agent' });
    expect(found).toEqual([expect.objectContaining({ assistant_id: ASSISTANT_ID, graph_id: 'agent', name: 'agent', version: 1 })]);
    expect((await lg.assistants.get('agent')).assistant_id).toBe(ASSISTANT_ID);
    const schemas = await lg.assistants.getSchemas(ASSISTANT_ID);
    expect(schemas.input_schema).toMatchObject({ properties: { messages: { type: 'array' } } });
    expect(schemas.context_schema).toMatchObject({ properties: { collection_ids: { type: 'array' } } });
    const graph = await lg.assistants.getGraph('agent');
    expect(graph.nodes.map((node) => node.id)).toEqual(expect.arrayContaining(['__start__', '__end__']));
    expect(graph.edges.length).toBeGreaterThan(1);
    expect(await statusOf(lg.assistants.get('another-graph'))).toBe(404);
  });

  it('streams a knowledge answer on a new thread with values, messages-tuple, updates and custom, and the thread reads back as state, history, search and session', async () => {
    const user = uniqueUser('lg-stream');
    const lg = client(user);
    const thread = await lg.threads.create({ metadata: { app: 'lg-e2e', user } });
    expect(thread).toMatchObject({ status: 'idle', metadata: { app: 'lg-e2e' } });
    const responses: Response[] = [];
    const watched = new Client({
      apiUrl: `${base}/langgraph`,
      defaultHeaders: t.auth(user),
      callerOptions: {
        maxRetries: 0,
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          const response = await fetch(input, init);
          responses.push(response);
          return response;
        },
      },
    });
    const parts = await collect(
      watched.runs.stream(thread.thread_id, 'agent', { input: human(WARRANTY), streamMode: ['values', 'messages-tuple', 'updates', 'custom'] }) as AsyncIterable<Part>,
    );
    const runId = parts[0].data.run_id as string;
    expect(parts[0]).toMatchObject({ event: 'metadata', data: { run_id: expect.any(String), attempt: 1 } });
    expect(responses[0].headers.get('content-location')).toBe(`/threads/${thread.thread_id}/runs/${runId}`);
    expect(responses[0].headers.get('location')).toBe(`/threads/${thread.thread_id}/runs/${runId}/stream`);
    // Every part has its own id.
    expect(new Set(parts.map((part) => part.id)).size).toBe(parts.length);
    const chunks = parts.filter((part) => part.event === 'messages');
    expect(chunks.length).toBeGreaterThan(0);
    const streamed = chunks.map((part) => part.data[0].content as string).join('');
    const values = parts.filter((part) => part.event === 'values').at(-1)!.data;
    const answer = values.messages.at(-1);
    expect(answer).toMatchObject({ type: 'ai', content: streamed });
    expect(answer.content).toMatch(/three-year/);
    // The chunks' message id is the answer's id in values (and in the history below).
    expect(new Set(chunks.map((part) => part.data[0].id))).toEqual(new Set([answer.id]));
    const custom = parts.filter((part) => part.event === 'custom').map((part) => part.data.type);
    expect(custom).toEqual(expect.arrayContaining(['rag_step', 'tool', 'rag_trace']));
    expect(parts.find((part) => part.event === 'custom' && part.data.type === 'rag_trace')!.data.trace).toMatchObject({ retrieval_stage: expect.any(String) });
    expect(parts.some((part) => part.event === 'updates' && part.data.tools)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ event: 'end', data: { run_id: runId, status: 'success' } });

    const state = await lg.threads.getState(thread.thread_id);
    expect(state.values).toEqual({ messages: values.messages });
    expect(state.checkpoint?.checkpoint_id).toEqual(expect.any(String));
    expect(state.next).toEqual([]);
    const history = await lg.threads.getHistory(thread.thread_id, { limit: 10 });
    expect(history.map((s) => (s.values as any).messages.length)).toEqual([2, 1, 0]);
    expect(history[0].parent_checkpoint?.checkpoint_id).toBe(history[1].checkpoint.checkpoint_id);
    expect(history[2].parent_checkpoint).toBeNull();
    // The history repeats every message in every state: the answers' traces are left out there (the state has them).
    expect((history[0].values as any).messages[1].additional_kwargs.rag_trace).toBeUndefined();
    expect((state.values as any).messages[1].additional_kwargs.rag_trace).toMatchObject({ retrieval_stage: expect.any(String) });
    expect([...history.map((s) => s.checkpoint.checkpoint_id)].sort().reverse()).toEqual(history.map((s) => s.checkpoint.checkpoint_id));
    expect((await lg.threads.getState(thread.thread_id, history[1].checkpoint.checkpoint_id!)).values).toEqual(history[1].values);

    const searched = await lg.threads.search({ metadata: { app: 'lg-e2e', user } });
    expect(searched.map((s) => s.thread_id)).toEqual([thread.thread_id]);
    // A run names the graph and the assistant on its thread, as agent-chat-ui's thread list expects.
    expect(searched[0].metadata).toMatchObject({ graph_id: 'agent', assistant_id: ASSISTANT_ID });
    expect((await lg.threads.search({ metadata: { graph_id: 'agent', user } })).length).toBe(1);
    expect(await lg.threads.search({ metadata: { app: 'another' } })).toEqual([]);

    // The same conversation as a session of the service's own API.
    const stored = await transcript(user, thread.thread_id);
    expect(stored.map((m) => [m.type, m.content])).toEqual(values.messages.map((m: any) => [m.type, m.content]));
    const run = await lg.runs.get(thread.thread_id, runId);
    expect(run).toMatchObject({ run_id: runId, thread_id: thread.thread_id, status: 'success' });
    expect((await lg.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([runId]);
  });

  it('pauses an ambiguous question as an interrupt seen in the state, and resumes it with command.resume from the chosen document', async () => {
    const user = uniqueUser('lg-hitl');
    const lg = client(user);
    const thread = await lg.threads.create();
    const paused = (await lg.runs.wait(thread.thread_id, 'agent', { input: human(AMBIGUOUS) })) as any;
    const [interrupt] = paused.__interrupt__;
    expect(interrupt.value).toMatchObject({
      hitl_type: 'choose',
      options: expect.arrayContaining(['Aurora X2 Mesh System — User Manual']),
      action_requests: [{ name: 'clarify', args: expect.any(Object) }],
      review_configs: [{ action_name: 'clarify', allowed_decisions: expect.arrayContaining(['edit', 'reject']) }],
    });
    const state = await lg.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['agent']);
    expect(state.tasks[0].interrupts).toEqual([interrupt]);
    expect((await lg.threads.get(thread.thread_id)).status).toBe('interrupted');

    // agent-chat-ui's edit decision carries the answer in edited_action.args.
    const resumed = (await lg.runs.wait(thread.thread_id, 'agent', {
      command: { resume: { decisions: [{ type: 'edit', edited_action: { name: 'clarify', args: { answer: 'Aurora X2 Mesh System — User Manual' } } }] } },
    })) as any;
    expect(resumed.__interrupt__).toBeUndefined();
    expect(lastAi(resumed)).toMatch(/three-year/);
    // Answered from the document chosen, not from the one set aside.
    expect(lastAi(resumed)).not.toMatch(/two-year|X1/);
    expect((await lg.threads.get(thread.thread_id)).status).toBe('idle');
    expect((await lg.threads.getState(thread.thread_id)).tasks).toEqual([]);
    // A resume with nothing to resume is refused.
    expect(await statusOf(lg.runs.wait(thread.thread_id, 'agent', { command: { resume: 'X2' } }))).toBe(409);
  });

  it('forks from an earlier checkpoint as agent-chat-ui regenerates and edits: the messages after it are replaced', async () => {
    const user = uniqueUser('lg-fork');
    const lg = client(user);
    const thread = await lg.threads.create();
    const tid = thread.thread_id;
    await lg.runs.wait(tid, 'agent', { input: human('What is the weather in Paris?') });
    await lg.runs.wait(tid, 'agent', { input: human(WARRANTY) });
    const history = await lg.threads.getHistory(tid, { limit: 10 });
    // Regenerate: no input, from the state after the second question (its parent_checkpoint as agent-chat-ui finds it).
    const afterQuestion = history.find((state) => (state.values as any).messages.length === 3)!;
    const regenerated = (await lg.runs.wait(tid, 'agent', { checkpoint: afterQuestion.checkpoint })) as any;
    expect(regenerated.messages.map((m: any) => m.type)).toEqual(['human', 'ai', 'human', 'ai']);
    expect(lastAi(regenerated)).toMatch(/three-year/);
    expect((await transcript(user, tid)).map((m) => m.content.slice(0, 20))).toEqual(['What is the weather ', expect.any(String), WARRANTY.slice(0, 20), expect.any(String)]);
    // Edit: a new question from the state before the second one.
    const beforeQuestion = (await lg.threads.getHistory(tid, { limit: 10 })).find((state) => (state.values as any).messages.length === 2)!;
    const edited = (await lg.runs.wait(tid, 'agent', { input: human('How long is the Aurora X1 warranty?'), checkpoint: beforeQuestion.checkpoint })) as any;
    expect(edited.messages.map((m: any) => m.content.slice(0, 20))).toEqual(['What is the weather ', expect.any(String), 'How long is the Auro', expect.any(String)]);
    expect(edited.messages[2].content).toBe('How long is the Aurora X1 warranty?');
    expect((await transcript(user, tid)).length).toBe(4);
    // A checkpoint that is not the thread's, and a regenerate from a state that does not end with a question, are refused.
    expect(await statusOf(lg.runs.wait(tid, 'agent', { checkpointId: '00000002-0000-0000-0000-000000000000' }))).toBe(404);
    expect(await statusOf(lg.runs.wait(tid, 'agent', { checkpoint: beforeQuestion.checkpoint }))).toBe(400);
  });

  it('joins a background run from another instance with a last event id: the rest of the stream, without duplicates or gaps', async () => {
    const user = uniqueUser('lg-join');
    const lg = client(user);
    const thread = await lg.threads.create();
    const run = await lg.runs.create(thread.thread_id, 'agent', { input: human(WARRANTY), streamMode: ['values', 'messages-tuple', 'custom'] });
    expect(run).toMatchObject({ run_id: expect.any(String), thread_id: thread.thread_id });
    const elsewhere = client(user, otherBase);
    const whole = await collect(elsewhere.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }) as AsyncIterable<Part>);
    expect(whole[0].event).toBe('metadata');
    expect(whole.at(-1)?.event).toBe('end');
    expect(new Set(whole.map((part) => part.id)).size).toBe(whole.length);
    for (const at of [1, Math.floor(whole.length / 2), whole.length - 2]) {
      const rest = await collect(elsewhere.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: whole[at].id }) as AsyncIterable<Part>);
      expect(rest).toEqual(whole.slice(at + 1));
    }
    expect(lastAi(await elsewhere.runs.join(thread.thread_id, run.run_id))).toMatch(/three-year/);
    // The events and debug modes: LangChain stream events, checkpoints and tool tasks.
    const traced = await collect(elsewhere.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1', streamMode: ['events', 'debug'] }) as AsyncIterable<Part>);
    const kinds = traced.filter((part) => part.event === 'events').map((part) => part.data.event);
    expect(kinds).toEqual(expect.arrayContaining(['on_chain_start', 'on_chat_model_stream', 'on_tool_start', 'on_tool_end', 'on_custom_event', 'on_chain_end']));
    expect(traced.filter((part) => part.event === 'debug').map((part) => part.data.type)).toEqual(expect.arrayContaining(['checkpoint', 'task', 'task_result']));
    expect(traced.some((part) => part.event === 'values' || part.event === 'messages')).toBe(false);

    // Once its events have expired from Redis, the ended run is told from what it stored.
    const redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
    await redis.del(`chat_run_events:${run.run_id}`);
    await redis.quit();
    expect(lastAi(await elsewhere.runs.join(thread.thread_id, run.run_id))).toMatch(/three-year/);
    const told = await collect(elsewhere.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }) as AsyncIterable<Part>);
    expect(told.map((part) => part.event)).toEqual(['metadata', 'values', 'updates', 'values', 'end']);
    expect(lastAi(told.at(-2)!.data)).toMatch(/three-year/);
  });

  it('applies the multitask strategies to a busy thread: reject refuses, interrupt and rollback cancel the running run, enqueue waits for it', async () => {
    const user = uniqueUser('lg-multi');
    const lg = client(user);
    const thread = await lg.threads.create();
    const tid = thread.thread_id;

    const first = await heldRun(lg, tid);
    expect(await statusOf(lg.runs.create(tid, 'agent', { input: human(WARRANTY) }))).toBe(409);
    expect(await statusOf(lg.runs.create(tid, 'agent', { input: human(WARRANTY), multitaskStrategy: 'reject' }))).toBe(409);
    expect((await lg.threads.get(tid)).status).toBe('busy');

    // interrupt: the held run is cancelled (its question kept, marked cancelled), then the new run answers.
    const second = (await lg.runs.wait(tid, 'agent', { input: human(WARRANTY), multitaskStrategy: 'interrupt' })) as any;
    expect(lastAi(second)).toMatch(/three-year/);
    expect((await lg.runs.get(tid, first.run_id)).status).toBe('interrupted');
    expect((await transcript(user, tid)).map((m) => [m.type, m.status])).toEqual([
      ['human', 'cancelled'],
      ['human', 'complete'],
      ['ai', 'complete'],
    ]);

    // rollback: the held run is cancelled and what it kept removed.
    const third = await heldRun(lg, tid);
    await lg.runs.wait(tid, 'agent', { input: human(WARRANTY), multitaskStrategy: 'rollback' });
    expect((await lg.runs.get(tid, third.run_id)).status).toBe('interrupted');
    const afterRollback = await transcript(user, tid);
    expect(afterRollback.map((m) => [m.type, m.status])).toEqual([
      ['human', 'cancelled'],
      ['human', 'complete'],
      ['ai', 'complete'],
      ['human', 'complete'],
      ['ai', 'complete'],
    ]);
    expect(afterRollback.some((m) => m.content === WEATHER && m.status === 'cancelled' && afterRollback.indexOf(m) > 0)).toBe(false);

    // enqueue: the new run is queued (pending, on every instance) and starts once the held one has finished.
    const fourth = await heldRun(lg, tid);
    const queued = await lg.runs.create(tid, 'agent', { input: human(WARRANTY), multitaskStrategy: 'enqueue' });
    expect(queued.status).toBe('pending');
    const elsewhere = client(user, otherBase);
    expect((await elsewhere.runs.get(tid, queued.run_id)).status).toBe('pending');
    // A run queued and cancelled before its turn never starts.
    const dropped = await lg.runs.create(tid, 'agent', { input: human('Never asked'), multitaskStrategy: 'enqueue' });
    expect((await lg.runs.list(tid)).slice(0, 3).map((run) => [run.run_id, run.status])).toEqual([
      [dropped.run_id, 'pending'],
      [queued.run_id, 'pending'],
      [fourth.run_id, 'running'],
    ]);
    await lg.runs.cancel(tid, dropped.run_id);
    expect(await statusOf(lg.runs.get(tid, dropped.run_id))).toBe(404);
    // Joined from the other instance while still queued: the join waits for it to start and to end.
    const joined = elsewhere.runs.join(tid, queued.run_id);
    weather.release();
    expect(lastAi(await joined)).toMatch(/three-year/);
    expect((await lg.runs.get(tid, fourth.run_id)).status).toBe('success');
    expect((await lg.runs.get(tid, queued.run_id)).status).toBe('success');
    const afterEnqueue = (await transcript(user, tid)).slice(5);
    expect(afterEnqueue.map((m) => [m.type, m.type === 'human' ? m.content : m.status])).toEqual([
      ['human', WEATHER],
      ['ai', 'complete'],
      ['human', WARRANTY],
      ['ai', 'complete'],
    ]);
  });

  it('cancels a running run: it ends interrupted, the thread is idle again', async () => {
    const user = uniqueUser('lg-cancel');
    const lg = client(user);
    const thread = await lg.threads.create();
    const run = await heldRun(lg, thread.thread_id);
    await lg.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await lg.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');
    expect((await lg.threads.get(thread.thread_id)).status).toBe('idle');
    weather.release();
  });

  it('runs thread-less runs statelessly, keeps threads to their owner, and refuses a caller without credentials', async () => {
    const user = uniqueUser('lg-misc');
    const lg = client(user);
    const values = (await lg.runs.wait(null, 'agent', { input: human(WARRANTY) })) as any;
    expect(lastAi(values)).toMatch(/three-year/);
    const streamed = await collect(lg.runs.stream(null, 'agent', { input: human(WARRANTY), streamMode: ['messages-tuple'] }) as AsyncIterable<Part>);
    expect(streamed[0].event).toBe('metadata');
    expect(
      streamed
        .filter((part) => part.event === 'messages')
        .map((part) => part.data[0].content)
        .join(''),
    ).toMatch(/three-year/);
    // Nothing stored.
    expect(await lg.threads.search({})).toEqual([]);

    const thread = await lg.threads.create();
    const stranger = client(uniqueUser('lg-stranger'));
    expect(await statusOf(stranger.threads.get(thread.thread_id))).toBe(404);
    expect(await statusOf(stranger.threads.getState(thread.thread_id))).toBe(404);
    expect(await statusOf(stranger.runs.wait(thread.thread_id, 'agent', { input: human(WARRANTY) }))).toBe(404);
    expect(await statusOf(stranger.threads.delete(thread.thread_id))).toBe(404);
    // An API key as the SDK sends it (X-Api-Key) acts as its owner; with a bearer token beside it, it is refused.
    const { key } = (await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(user)).send({ name: 'langgraph' }).expect(201)).body;
    const keyed = new Client({ apiUrl: `${base}/langgraph`, apiKey: key, callerOptions: { maxRetries: 0 } });
    expect((await keyed.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    const both = new Client({ apiUrl: `${base}/langgraph`, apiKey: key, defaultHeaders: t.auth(user), callerOptions: { maxRetries: 0 } });
    expect(await statusOf(both.threads.get(thread.thread_id))).toBe(400);
    const forged = new Client({ apiUrl: `${base}/langgraph`, apiKey: 'rk-forged', callerOptions: { maxRetries: 0 } });
    expect(await statusOf(forged.threads.get(thread.thread_id))).toBe(401);
    const anonymous = new Client({ apiUrl: `${base}/langgraph`, callerOptions: { maxRetries: 0 } });
    expect(await statusOf(anonymous.threads.search({}))).toBe(401);
    expect(await statusOf(anonymous.runs.wait(null, 'agent', { input: human(WARRANTY) }))).toBe(401);
    // An existing id is refused unless if_exists says otherwise; crons and the store are refused with a 4xx.
    expect(await statusOf(lg.threads.create({ threadId: thread.thread_id }))).toBe(409);
    expect((await lg.threads.create({ threadId: thread.thread_id, ifExists: 'do_nothing' })).thread_id).toBe(thread.thread_id);
    expect(await statusOf(lg.crons.create('agent', { schedule: '* * * * *' }))).toBe(405);
    expect(await statusOf(lg.store.getItem(['a'], 'b'))).toBe(405);
    await lg.threads.delete(thread.thread_id);
    expect(await statusOf(lg.threads.get(thread.thread_id))).toBe(404);
  });
});
