import request from 'supertest';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { proxyToTestRedis } from './support/tcp-proxy.js';
import { testRedisUrlThrough } from './support/test-env.js';

describe('Per-user rate limits on chat turns and searches', () => {
  let a: TestApp;
  let b: TestApp;
  const limits = {
    RATE_LIMIT_CHAT_PER_MINUTE: '2',
    RATE_LIMIT_SEARCH_PER_MINUTE: '3',
    RATE_LIMIT_UPLOAD_PER_MINUTE: '1',
    RATE_LIMIT_RUN_CONTROL_PER_MINUTE: '2',
    KNOWLEDGE_SEED_ON_START: 'false',
  };
  beforeAll(async () => {
    a = await createTestApp(limits);
    b = await createTestApp(limits);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('answers 429 with Retry-After past the budget, shared by every instance, per user', async () => {
    const user = uniqueUser('limited');
    await request(a.app.getHttpServer()).post('/api/chat').set(a.auth(user)).send({ message: 'hello' }).expect(200);
    await request(b.app.getHttpServer()).post('/api/chat').set(b.auth(user)).send({ message: 'hello again' }).expect(200);
    const refused = await request(a.app.getHttpServer()).post('/api/chat/stream').set(a.auth(user)).send({ message: 'one more' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', message: expect.stringMatching(/Too many chat turns/) });
    // Someone else still has a budget.
    await request(b.app.getHttpServer())
      .post('/api/chat')
      .set(b.auth(uniqueUser('other')))
      .send({ message: 'hello' })
      .expect(200);
  });

  it('counts the LangGraph API runs as chat turns, thread-less ones too', async () => {
    const user = uniqueUser('limited-langgraph');
    const input = { messages: [{ type: 'human', content: 'hello' }] };
    const thread = await request(a.app.getHttpServer()).post('/langgraph/threads').set(a.auth(user)).send({}).expect(200);
    await request(a.app.getHttpServer()).post(`/langgraph/threads/${thread.body.thread_id}/runs/wait`).set(a.auth(user)).send({ assistant_id: 'agent', input }).expect(200);
    await request(b.app.getHttpServer()).post('/langgraph/runs/wait').set(b.auth(user)).send({ assistant_id: 'agent', input }).expect(200);
    const refused = await request(a.app.getHttpServer()).post(`/langgraph/threads/${thread.body.thread_id}/runs/stream`).set(a.auth(user)).send({ assistant_id: 'agent', input });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/Too many chat turns/);
    // Reading threads is not a turn.
    await request(b.app.getHttpServer()).post('/langgraph/threads/search').set(b.auth(user)).send({}).expect(200);
  });

  it('limits run cancels and stream tickets together, apart from chat turns', async () => {
    const user = uniqueUser('controller');
    const turn = await request(a.app.getHttpServer()).post('/api/chat').set(a.auth(user)).send({ message: 'hello' }).expect(200);
    const [{ id: runId }] = await a.dataSource.query('SELECT id FROM chat_runs WHERE session_id = $1', [turn.body.session_id]);
    await request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/ticket`).set(a.auth(user)).expect(200);
    await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user)).expect(200);
    const refused = await request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(a.auth(user)).expect(429);
    expect(refused.body.message).toMatch(/Too many run cancels and stream tickets/);
    await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/ticket`).set(b.auth(user)).expect(429);
  });

  it('counts only requests it accepts: refused bodies (400) spend no budget', async () => {
    const user = uniqueUser('invalid-bodies');
    const server = a.app.getHttpServer();
    for (let i = 0; i < 5; i += 1) {
      await request(server).post('/api/chat').set(a.auth(user)).send({ message: 42 }).expect(400);
      await request(server).post('/api/chat/stream').set(a.auth(user)).send({ message: 'hi', extra: true }).expect(400);
      await request(server).post('/v1/chat/completions').set(a.auth(user)).send({ messages: [] }).expect(400);
      await request(server).post('/api/chat/ui').set(a.auth(user)).send({ messages: 'none' }).expect(400);
      await request(server).post('/api/knowledge/search').set(a.auth(user)).send({ query: '' }).expect(400);
      await request(server).post('/api/chat/runs/not-a-run/cancel').set(a.auth(user)).expect(400);
    }
    await request(b.app.getHttpServer()).post('/api/chat').set(b.auth(user)).send({ message: 'hello' }).expect(200);
    await request(server).post('/api/chat').set(a.auth(user)).send({ message: 'hello again' }).expect(200);
    await request(server).post('/api/chat').set(a.auth(user)).send({ message: 'one too many' }).expect(429);
    for (let i = 0; i < 3; i += 1) await request(server).post('/api/knowledge/search').set(a.auth(user)).send({ query: 'warranty' }).expect(200);
    await request(server).post('/api/knowledge/search').set(a.auth(user)).send({ query: 'warranty' }).expect(429);
  });

  it('counts uploads refused with 400 all the same: their body was read and held before the refusal', async () => {
    const user = uniqueUser('bad-uploads');
    const server = a.app.getHttpServer();
    const upload = () =>
      request(server)
        .post('/api/knowledge/documents?wait=not-a-flag')
        .set(a.auth(user))
        .attach('file', Buffer.alloc(64 * 1024, 'a'), 'a.txt');
    expect((await upload()).status).toBe(400);
    expect((await upload()).status).toBe(429);
  });

  it('limits searches separately', async () => {
    const user = uniqueUser('searcher');
    for (let i = 0; i < 3; i += 1) {
      await request(a.app.getHttpServer()).post('/api/knowledge/search').set(a.auth(user)).send({ query: 'warranty' }).expect(200);
    }
    await request(b.app.getHttpServer()).post('/api/knowledge/search').set(b.auth(user)).send({ query: 'warranty' }).expect(429);
    await request(a.app.getHttpServer()).post('/api/chat').set(a.auth(user)).send({ message: 'hello' }).expect(200);
  });

  it('limits document uploads before the file is read', async () => {
    const admin = adminAuth(a, 'uploader');
    const first = await request(a.app.getHttpServer())
      .post('/api/knowledge/documents?wait=true')
      .set(admin)
      .attach('file', Buffer.from(`Rate limit probe ${Date.now()} ${Math.random()}`), 'rate-limit-probe.txt');
    expect(first.status).toBe(201);
    const second = await request(b.app.getHttpServer())
      .post('/api/knowledge/documents?wait=true')
      .set(admin)
      .attach('file', Buffer.from('another probe'), 'rate-limit-probe-2.txt');
    expect(second.status).toBe(429);
    await request(a.app.getHttpServer()).delete(`/api/knowledge/documents/${first.body.document.id}`).set(admin).expect(200);
  });

  it('still limits, per instance, while Redis is unreachable', async () => {
    const closed = await proxyToTestRedis();
    const port = closed.port;
    await closed.stop();
    const offline = await createTestApp({ ...limits, REDIS_URL: testRedisUrlThrough(port) });
    try {
      const user = uniqueUser('offline');
      await request(offline.app.getHttpServer()).post('/api/chat').set(offline.auth(user)).send({ message: 'hello' }).expect(200);
      await request(offline.app.getHttpServer()).post('/api/chat').set(offline.auth(user)).send({ message: 'hello' }).expect(200);
      await request(offline.app.getHttpServer()).post('/api/chat').set(offline.auth(user)).send({ message: 'hello' }).expect(429);
    } finally {
      await offline.close();
    }
  });
});
