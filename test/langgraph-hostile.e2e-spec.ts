import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** The LangGraph Server API under hostile input: clear 4xx answers, never a 500, nothing stored that cannot be read back. */
describe('LangGraph Server API: hostile input', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0', KNOWLEDGE_SEED_ON_START: 'false' });
  });
  afterAll(() => t.close());

  const post = (user: string, path: string, body: unknown) =>
    request(t.app.getHttpServer())
      .post(`/langgraph${path}`)
      .set(t.auth(user))
      .send(body as object);
  const human = (content: unknown) => ({ type: 'human', content });

  it('refuses metadata that PostgreSQL cannot keep, or that is too large, with a 400 naming it', async () => {
    const user = uniqueUser('lg-hostile-meta');
    for (const metadata of [{ note: 'a\u0000b' }, { ['k\u0000']: 1 }, { deep: { list: ['ok', 'lone \ud800'] } }, { big: 'x'.repeat(70_000) }, ['not', 'an', 'object'], 'text']) {
      const created = await post(user, '/threads', { metadata }).expect(400);
      expect(created.body.message).toMatch(/metadata/);
      await post(user, '/threads/search', { metadata }).expect(400);
      await post(user, '/threads/count', { metadata }).expect(400);
      await post(user, '/runs/wait', { assistant_id: 'agent', input: { messages: [human('hi')] }, metadata }).expect(400);
    }
    const thread = (await post(user, '/threads', { metadata: { app: 'hostile' } }).expect(200)).body;
    await request(t.app.getHttpServer())
      .patch(`/langgraph/threads/${thread.thread_id}`)
      .set(t.auth(user))
      .send({ metadata: { bad: '\u0000' } })
      .expect(400);
    // Each patch is small, their merge would not be.
    for (let i = 0; i < 3; i += 1) {
      await request(t.app.getHttpServer())
        .patch(`/langgraph/threads/${thread.thread_id}`)
        .set(t.auth(user))
        .send({ metadata: { [`part${i}`]: 'x'.repeat(30_000) } })
        .expect(i < 2 ? 200 : 400);
    }
    const kept = await request(t.app.getHttpServer()).get(`/langgraph/threads/${thread.thread_id}`).set(t.auth(user)).expect(200);
    expect(Object.keys(kept.body.metadata).sort()).toEqual(['app', 'part0', 'part1']);
  });

  it("bounds a thread-less run's conversation as /v1 does, and checks every message's text", async () => {
    const user = uniqueUser('lg-hostile-runs');
    const refused = async (messages: unknown) => (await post(user, '/runs/wait', { assistant_id: 'agent', input: { messages } }).expect(400)).body.message as string;
    expect(await refused([human('early \u0000'), human('hi')])).toMatch(/input\.messages\[0\].*NUL/);
    expect(await refused([human('lone \udc00'), human('hi')])).toMatch(/surrogate/);
    expect(await refused([human('x'.repeat(32_001)), human('hi')])).toMatch(/at most 32000/);
    expect(await refused(Array.from({ length: 501 }, () => human('hi')))).toMatch(/at most 500 messages/);
    expect(await refused([...Array.from({ length: 4 }, () => human('y'.repeat(30_000))), human('hi')])).toMatch(/at most 100000 characters/);
    for (const type of ['constructor', 'toString', '__proto__', 'valueOf']) expect(await refused([{ type, content: 'hi' }])).toMatch(/needs a type/);
    expect(await refused([human({ text: 'not blocks' })])).toMatch(/content must be/);
    expect(await refused([{ type: 'ai', content: 'the last message is not the user' }])).toMatch(/the user's/);
  });

  it("bounds a long thread's history by the messages it repeats, and builds only the states asked for", async () => {
    const user = uniqueUser('lg-hostile-history');
    const thread = (await post(user, '/threads', {}).expect(200)).body;
    const tid = thread.thread_id as string;
    for (let i = 0; i < 4; i += 1) {
      await t.storage.appendTurn(
        user,
        tid,
        Array.from({ length: 100 }, (_, k) => ({ type: k % 2 === 0 ? ('human' as const) : ('ai' as const), content: `message ${i * 100 + k + 1}` })),
      );
    }
    // 401 states of up to 400 messages each: the newest come first until 20 000 messages are repeated.
    const history = (await post(user, `/threads/${tid}/history`, { limit: 100 }).expect(200)).body as Array<{ values: { messages: unknown[] } }>;
    const repeated = history.reduce((sum, state) => sum + state.values.messages.length, 0);
    expect(history[0].values.messages).toHaveLength(400);
    expect(history.length).toBeLessThan(100);
    expect(repeated).toBeLessThanOrEqual(20_000);
    expect(history.map((state) => state.values.messages.length)).toEqual(history.map((_, i) => 400 - i));
    const head = await request(t.app.getHttpServer()).get(`/langgraph/threads/${tid}/state`).set(t.auth(user)).expect(200);
    expect(head.body.values.messages).toHaveLength(400);
  });

  it("reads the graph's xray as the SDK sends it (true, false or a depth) and refuses anything else with a 400", async () => {
    const user = uniqueUser('lg-hostile-xray');
    const graph = (query: string) => request(t.app.getHttpServer()).get(`/langgraph/assistants/agent/graph${query}`).set(t.auth(user));
    const plain = (await graph('').expect(200)).body;
    for (const xray of ['true', 'false', '0', '1', '5']) expect((await graph(`?xray=${xray}`).expect(200)).body).toEqual(plain);
    for (const xray of ['banana', '-1', '1.5', '']) {
      expect((await graph(`?xray=${xray}`).expect(400)).body).toMatchObject({ code: 'invalid_request', message: 'xray must be true, false or a depth (0–100)' });
    }
  });

  it('refuses bracketed query parameters (limit[a]=1, limit[]=1) with a 400 naming them, as the REST routes do', async () => {
    const user = uniqueUser('lg-hostile-query');
    const server = () => request(t.app.getHttpServer());
    const rest = await server().get('/api/sessions?limit[a]=1').set(t.auth(user)).expect(400);
    expect(rest.body.message).toBe('property limit[a] should not exist');
    const tid = (await post(user, '/threads', {}).expect(200)).body.thread_id as string;
    const refusals = [
      server().get(`/langgraph/threads/${tid}/runs?limit[a]=1`),
      server().get(`/langgraph/threads/${tid}/runs?limit[]=1&offset=0`),
      server().get(`/langgraph/threads/${tid}?limit[a]=1`),
      server().get('/langgraph/assistants/agent/graph?xray[a]=1'),
      server().post('/langgraph/threads/search?limit[a]=1').send({}),
    ];
    for (const refusal of refusals) {
      const res = await refusal.set(t.auth(user));
      expect({ status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        status: 400,
        code: 'invalid_request',
        message: expect.stringMatching(/^property (limit|xray)\[a?\] should not exist$/),
      });
    }
    // Plain parameters the SDK may send, known or not, still go through.
    await server().get(`/langgraph/threads/${tid}/runs?limit=1&offset=0`).set(t.auth(user)).expect(200);
    await server().get(`/langgraph/threads/${tid}?unknown=1`).set(t.auth(user)).expect(200);
  });

  it('answers malformed bodies, ids, checkpoints, pages and event ids with a 4xx', async () => {
    const user = uniqueUser('lg-hostile-misc');
    const thread = (await post(user, '/threads', {}).expect(200)).body;
    const tid = thread.thread_id as string;
    for (const body of ['[]', '[{"limit":1}]', '"text"', '42']) {
      await request(t.app.getHttpServer()).post('/langgraph/threads/search').set(t.auth(user)).set('Content-Type', 'application/json').send(body).expect(400);
    }
    await post(user, `/threads/${tid}/history`, { before: { nested: true } }).expect(400);
    await post(user, `/threads/${tid}/history`, { limit: 101 }).expect(400);
    await post(user, `/threads/${tid}/history`, { limit: '-1' }).expect(400);
    await post(user, '/threads/search', { sort_by: 'created_at; DROP TABLE chat_sessions; --' }).expect(400);
    await post(user, '/threads/search', { limit: 1e9 }).expect(400);
    // A thread without messages has no checkpoint, its root included.
    await request(t.app.getHttpServer()).get(`/langgraph/threads/${tid}/state/00000000-0000-0000-0000-000000000000`).set(t.auth(user)).expect(404);
    await post(user, `/threads/${tid}/state/checkpoint`, { checkpoint: { checkpoint_id: '00000000-0000-0000-0000-000000000000' } }).expect(404);
    await post(user, `/threads/${tid}/state/checkpoint`, { checkpoint: 'x' }).expect(400);
    for (const id of ['not-a-uuid', '..', '%00', '00000000-0000-0000-0000-00000000000g']) {
      const status = (
        await request(t.app.getHttpServer())
          .get(`/langgraph/threads/${encodeURIComponent(id)}`)
          .set(t.auth(user))
      ).status;
      expect([400, 404]).toContain(status);
    }
    const runs = `/langgraph/threads/${tid}/runs/00000000-0000-4000-8000-000000000000`;
    for (const lastEventId of ['abc', '-2', '1_99999', '1e3', ' 1 ']) {
      const status = (await request(t.app.getHttpServer()).get(`${runs}/stream`).set(t.auth(user)).set('Last-Event-ID', lastEventId)).status;
      expect([400, 404]).toContain(status);
    }
    await post(user, `/threads/${tid}/runs/wait`, { assistant_id: 'agent', input: { messages: [human('hi')] }, stream_mode: Array.from({ length: 17 }, () => 'values') }).expect(
      400,
    );
    await post(user, `/threads/${tid}/runs/wait`, { assistant_id: 'agent', input: { messages: [human('hi')] }, multitask_strategy: 'sometimes' }).expect(400);
    await post(user, `/threads/${tid}/runs/wait`, { assistant_id: 'agent', command: { goto: '__end__' } }).expect(405);
    await post(user, `/threads/${tid}/runs/wait`, { assistant_id: 'agent', command: { resume: 'x' } }).expect(409);
    await post(user, `/threads/${tid}/runs/wait`, { assistant_id: 'another', input: { messages: [human('hi')] } }).expect(404);
    const counted = await post(user, '/threads/count', {}).expect(200);
    expect(counted.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(counted.text)).toBe(1);
    const searched = await post(user, '/threads/search', { limit: 1 }).expect(200);
    expect(searched.headers['x-pagination-total']).toBe('1');
  });

  it('refuses a body that is not JSON (text/plain, a form) with a 415 instead of ignoring it', async () => {
    const user = uniqueUser('lg-hostile-media');
    const tid = (await post(user, '/threads', { metadata: { kept: 'yes' } }).expect(200)).body.thread_id as string;
    const server = () => request(t.app.getHttpServer());
    const patched = await server()
      .patch(`/langgraph/threads/${tid}`)
      .set(t.auth(user))
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify({ metadata: { kept: 'no' } }))
      .expect(415);
    expect(patched.body).toMatchObject({ code: 'unsupported_encoding' });
    expect(patched.body.message).toMatch(/Content-Type: application\/json/);
    // A thread named in a body that is not read is not created under another id.
    const named = crypto.randomUUID();
    await server()
      .post('/langgraph/threads')
      .set(t.auth(user))
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify({ thread_id: named }))
      .expect(415);
    await server().post('/langgraph/threads').set(t.auth(user)).type('form').send({ thread_id: named }).expect(415);
    await server().post(`/langgraph/threads/${tid}/runs/wait`).set(t.auth(user)).set('Content-Type', 'application/xml').send('<input/>').expect(415);
    expect((await post(user, '/threads/count', {}).expect(200)).body).toBe(1);
    expect((await server().get(`/langgraph/threads/${tid}`).set(t.auth(user)).expect(200)).body.metadata).toMatchObject({ kept: 'yes' });
    // Without a body (the SDK's cancel and GETs, a POST with Content-Length: 0) nothing is refused.
    await server().post('/langgraph/threads').set(t.auth(user)).set('Content-Length', '0').expect(200);
    await server().get(`/langgraph/threads/${tid}`).set(t.auth(user)).set('Content-Type', 'text/plain').expect(200);
  });

  it('takes as thread and run ids only the UUIDs the REST routes take, so that every thread is a session /api/sessions can address', async () => {
    const user = uniqueUser('lg-hostile-uuid');
    const server = () => request(t.app.getHttpServer());
    // Version 0 and a bad variant are not RFC 9562 UUIDs: /api/sessions/:id refuses them, so no thread may be created under them.
    for (const id of ['12345678-1234-0234-8234-123456789012', '12345678-1234-4234-0234-123456789012']) {
      await post(user, '/threads', { thread_id: id }).expect(400);
      await server().get(`/langgraph/threads/${id}`).set(t.auth(user)).expect(400);
      await post(user, `/threads/${id}/runs/wait`, { input: { messages: [human('hi')] }, if_not_exists: 'create' }).expect(400);
      await server().get(`/api/sessions/${id}`).set(t.auth(user)).expect(400);
    }
    // The nil UUID and a version 8 one are UUIDs on both sides.
    for (const id of ['00000000-0000-0000-0000-000000000000', '12345678-1234-8234-8234-123456789012']) {
      const created = await post(user, '/threads', { thread_id: id, if_exists: 'do_nothing' });
      expect([200, 409]).toContain(created.status);
      if (created.status === 200) await server().get(`/api/sessions/${id}`).set(t.auth(user)).expect(200);
    }
  });

  it('refuses an assistants search or count whose filters have the wrong type, instead of matching as if they were absent', async () => {
    const user = uniqueUser('lg-hostile-assistants');
    for (const path of ['/assistants/search', '/assistants/count']) {
      for (const body of [{ metadata: 'x' }, { metadata: [1] }, { graph_id: 7 }, { graph_id: ['agent'] }, { name: { $ne: 'x' } }]) {
        const refused = await post(user, path, body).expect(400);
        expect(refused.body).toMatchObject({ code: 'invalid_request' });
      }
    }
    for (const select of ['name', [1], ['name', 'no_such_field']]) await post(user, '/assistants/search', { select }).expect(400);
    // Well-typed filters still match (or not) as before.
    expect((await post(user, '/assistants/search', { graph_id: 'agent', metadata: { created_by: 'system' }, select: ['name'] }).expect(200)).body).toEqual([{ name: 'agent' }]);
    expect((await post(user, '/assistants/search', { graph_id: 'other' }).expect(200)).body).toEqual([]);
    expect(JSON.parse((await post(user, '/assistants/count', { graph_id: 'agent', metadata: null }).expect(200)).text)).toBe(1);
  });
});
