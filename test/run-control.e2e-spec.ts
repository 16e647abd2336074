import request from 'supertest';
import { RunCancellation } from '../src/chat/run-cancellation.service.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { openSse } from './support/sse-client.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** Finding a run and stopping it: run discovery, the 409's run id, cancel on any instance. */
describe('Run discovery and cancel', () => {
  const weather = new FakeWeatherServer();
  let a: TestApp;
  let b: TestApp;
  let baseA: string;

  beforeAll(async () => {
    await weather.start();
    const env = { WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '0' };
    // Two instances on the same database and Redis.
    [a, b] = await Promise.all([createTestApp(env), createTestApp(env)]);
    baseA = await a.listen();
    await Promise.all([a.app.get(RunCancellation).listening, b.app.get(RunCancellation).listening]);
  }, 60_000);
  afterAll(async () => {
    weather.release();
    await Promise.all([a?.close(), b?.close()]);
    await weather.stop();
  });

  const heldTurn = (user: string, sessionId?: string) => heldWeatherTurn(baseA, a.auth(user), weather, sessionId);

  it('names the running run in the 409 and in GET /api/chat/runs/:run_id, and 404s it to anyone else', async () => {
    const user = uniqueUser('discover');
    const { stream, runId, sessionId } = await heldTurn(user);
    try {
      const conflict = await request(b.app.getHttpServer()).post('/api/chat').set(b.auth(user)).send({ message: 'and now?', session_id: sessionId }).expect(409);
      expect(conflict.body).toMatchObject({ code: 'run_in_progress', run_id: runId });

      const running = await request(b.app.getHttpServer()).get(`/api/chat/runs/${runId}`).set(b.auth(user)).expect(200);
      expect(running.body).toEqual({
        run_id: runId,
        session_id: sessionId,
        status: 'running',
        started_at: expect.any(String),
        finished_at: null,
        message: 'What is the weather in Paris?',
      });
      await request(b.app.getHttpServer())
        .get(`/api/chat/runs/${runId}`)
        .set(b.auth(uniqueUser('intruder')))
        .expect(404);
      await request(b.app.getHttpServer())
        .post(`/api/chat/runs/${runId}/cancel`)
        .set(b.auth(uniqueUser('intruder')))
        .expect(404);
      await request(b.app.getHttpServer()).get('/api/chat/runs/not-a-uuid').set(b.auth(user)).expect(400);
    } finally {
      weather.release();
      await stream.ended;
    }
    const done = await request(a.app.getHttpServer()).get(`/api/chat/runs/${runId}`).set(a.auth(user)).expect(200);
    expect(done.body).toMatchObject({ status: 'done', finished_at: expect.any(String) });
  });

  it('cancels a run held in a tool from another instance: the stream ends with `cancelled`, the message is kept, the session is free at once', async () => {
    const user = uniqueUser('cancel');
    const { stream, runId, sessionId } = await heldTurn(user);
    const cancelled = await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user)).expect(200);
    expect(cancelled.body).toMatchObject({ run_id: runId, status: 'cancelled', finished_at: expect.any(String) });
    await stream.ended;
    weather.release();
    expect(stream.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'cancelled', message_saved: true } });
    expect(stream.events.some((event) => event.event === 'done')).toBe(false);

    // Idempotent, and the session takes a new turn right away.
    const again = await request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(a.auth(user)).expect(200);
    expect(again.body.status).toBe('cancelled');
    const next = await request(a.app.getHttpServer()).post('/api/chat').set(a.auth(user)).send({ message: 'Hello', session_id: sessionId }).expect(200);
    expect(next.body.session_id).toBe(sessionId);

    const messages = (await request(b.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(b.auth(user)).expect(200)).body.messages;
    // The cancelled turn kept its question (no answer had started); the next turn is whole.
    expect(messages.map((m: { type: string; status: string; run_id: string | null }) => [m.type, m.status, m.run_id === runId])).toEqual([
      ['human', 'cancelled', true],
      ['human', 'complete', false],
      ['ai', 'complete', false],
    ]);
  });

  it('answers a finished run’s cancel with how it ended', async () => {
    const user = uniqueUser('finished');
    const turn = await request(a.app.getHttpServer()).post('/api/chat').set(a.auth(user)).send({ message: 'Hello' }).expect(200);
    const [{ id: runId }] = await a.dataSource.query(`SELECT id FROM chat_runs WHERE session_id = $1`, [turn.body.session_id]);
    const res = await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user)).expect(200);
    expect(res.body.status).toBe('done');
  });
});

describe('Cancel during token streaming', () => {
  const llm = new FakeOpenAIServer();
  let a: TestApp;
  let b: TestApp;
  let baseA: string;

  beforeAll(async () => {
    await llm.start();
    const env = llm.appEnv({ RATE_LIMIT_CHAT_PER_MINUTE: '0' });
    [a, b] = await Promise.all([createTestApp(env), createTestApp(env)]);
    baseA = await a.listen();
    await Promise.all([a.app.get(RunCancellation).listening, b.app.get(RunCancellation).listening]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await llm.stop();
  });

  it('keeps the answer streamed so far, marked cancelled, when another instance cancels mid-answer', async () => {
    const user = uniqueUser('midstream');
    llm.play({ content: 'Hello there, this answer will never finish', hangAfter: 3 });
    const stream = await openSse(`${baseA}/api/chat/stream`, {
      method: 'POST',
      headers: { ...a.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'Say hello' }),
    });
    const metadata = await stream.waitFor((event) => event.event === 'metadata');
    await stream.waitFor((event) => event.event === 'token' && event.data.text === 'this ');
    const runId = metadata.data.run_id as string;
    const sessionId = metadata.data.session_id as string;

    await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user)).expect(200);
    await stream.ended;
    expect(stream.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'cancelled', message_saved: true } });

    const messages = (await request(b.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(b.auth(user)).expect(200)).body.messages;
    expect(messages.map((m: { type: string; content: string; status: string }) => [m.type, m.content, m.status])).toEqual([
      ['human', 'Say hello', 'cancelled'],
      ['ai', 'Hello there, this ', 'cancelled'],
    ]);
    const [{ status }] = await a.dataSource.query(`SELECT status FROM chat_runs WHERE id = $1`, [runId]);
    expect(status).toBe('cancelled');
  });
});
