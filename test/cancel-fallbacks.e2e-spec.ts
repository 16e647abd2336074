import request from 'supertest';
import { RunCancellation } from '../src/chat/run-cancellation.service.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { waitUntil } from './support/service-process.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** cancel fallbacks and the heartbeat abort. */
describe('cancel when Redis cannot carry it, and the heartbeat abort', () => {
  const weather = new FakeWeatherServer();
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  /** Both apps' log lines, parsed (Nest's static logger, which `new Logger(name)` writes to, is whichever app started last). */
  const logged: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    await weather.start();
    const env = {
      WEATHER_BASE_URL: weather.url,
      WEATHER_GEOCODING_URL: weather.url,
      RATE_LIMIT_CHAT_PER_MINUTE: '0',
      RUN_HEARTBEAT_MS: '100',
      RUN_STALE_AFTER_MS: '5000',
      RUN_CANCEL_WAIT_MS: '100',
    };
    // B cannot reach Redis (nothing listens on port 1): its cancel requests cannot travel.
    const destination = { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) } as never;
    [a, b] = await Promise.all([
      createTestApp({ ...env, LOG_LEVEL: 'info' }, destination),
      createTestApp({ ...env, REDIS_URL: 'redis://127.0.0.1:1/12', LOG_LEVEL: 'info' }, destination),
    ]);
    baseA = await a.listen();
    await a.app.get(RunCancellation).listening;
  }, 60_000);
  afterAll(async () => {
    weather.release();
    await Promise.all([a?.close(), b?.close()]);
    await weather.stop();
  });

  const heldTurn = (user: string, sessionId?: string) => heldWeatherTurn(baseA, a.auth(user), weather, sessionId);

  it('DB-fallback cancel: the human message is kept, marked cancelled (issue 11 item 4)', async () => {
    const user = uniqueUser('fallback');
    const { stream, runId, sessionId } = await heldTurn(user);
    try {
      const res = await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user)).expect(200);
      expect(res.body.status).toBe('cancelled');
      await stream.ended;
    } finally {
      weather.release();
    }
    const last = stream.events.at(-1);
    const messages = (await request(a.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(a.auth(user)).expect(200)).body.messages;
    expect({ last: last?.data, messages: messages.map((m: { type: string; status: string }) => [m.type, m.status]) }).toEqual({
      last: expect.objectContaining({ code: 'cancelled', message_saved: true }),
      messages: [['human', 'cancelled']],
    });
  });

  it('a session deleted while its turn runs ends the stream with session_deleted, not cancelled', async () => {
    const user = uniqueUser('deleted');
    const { stream, sessionId } = await heldTurn(user);
    try {
      await request(a.app.getHttpServer()).delete(`/api/sessions/${sessionId}`).set(a.auth(user)).expect(200);
      // The heartbeat sees the run gone and stops the turn while its tool is still held.
      await stream.ended;
    } finally {
      weather.release();
    }
    expect(stream.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'session_deleted', message_saved: false } });
    // The user's own delete is no fault of the service: said at info level, with no error and stack trace.
    const turnEnd = () => logged.filter((line) => line.session_id === sessionId && line.context === 'ChatService');
    await waitUntil(() => turnEnd().length > 0, "the turn's end in the log (just after its stream's)", 10_000, 10);
    expect(turnEnd().map(({ level, msg, err }) => ({ level, msg, err }))).toEqual([{ level: 30, msg: 'turn ended: its session was deleted while it ran', err: undefined }]);
  });
  it('three concurrent cancels both answer cancelled, and the turn is stored once', async () => {
    const user = uniqueUser('twice');
    const { stream, runId, sessionId } = await heldTurn(user);
    let answers: number[];
    try {
      const [one, two, three] = await Promise.all([
        request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(a.auth(user)),
        request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(a.auth(user)),
        request(a.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(a.auth(user)),
      ]);
      answers = [one.status, two.status, three.status];
      expect([one.body.status, two.body.status, three.body.status]).toEqual(['cancelled', 'cancelled', 'cancelled']);
      await stream.ended;
    } finally {
      weather.release();
    }
    expect(answers).toEqual([200, 200, 200]);
    const messages = (await request(a.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(a.auth(user)).expect(200)).body.messages;
    expect(messages.map((m: { type: string; status: string }) => [m.type, m.status])).toEqual([['human', 'cancelled']]);
    expect(stream.events.filter((e) => e.event === 'error' || e.event === 'done')).toHaveLength(1);
  });
});
