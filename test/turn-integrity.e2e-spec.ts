import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ResilientCache } from '../src/cache/resilient-cache.service.js';
import { RunRegistry } from '../src/chat/run-registry.service.js';
import { messagesCacheKey } from '../src/session/session-cache-keys.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { openSse } from './support/sse-client.js';
import { waitUntil } from './support/service-process.js';

/** What the database still holds about a session, in every table that names it or its runs. */
async function leftovers(t: TestApp, sessionId: string, threadIds: string[]) {
  const [row] = await t.dataSource.query(
    `SELECT (SELECT count(*)::int FROM chat_sessions WHERE id = $1) AS sessions,
            (SELECT count(*)::int FROM chat_messages WHERE session_id = $1) AS messages,
            (SELECT count(*)::int FROM chat_runs WHERE session_id = $1) AS runs,
            (SELECT count(*)::int FROM checkpoints WHERE thread_id = ANY($2::text[])) AS checkpoints,
            (SELECT count(*)::int FROM checkpoint_writes WHERE thread_id = ANY($2::text[])) AS checkpoint_writes,
            (SELECT count(*)::int FROM checkpoint_blobs WHERE thread_id = ANY($2::text[])) AS checkpoint_blobs`,
    [sessionId, threadIds],
  );
  return row;
}

const NOTHING = { sessions: 0, messages: 0, runs: 0, checkpoints: 0, checkpoint_writes: 0, checkpoint_blobs: 0 };

describe('Turn integrity: ownership while a first turn runs, deletes that win', () => {
  let t: TestApp;
  let base: string;
  const weather = new FakeWeatherServer();

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url });
    base = await t.listen();
  });
  afterAll(async () => {
    await t.close();
    await weather.stop();
  });
  afterEach(() => weather.release());

  const json = (user: string) => ({ ...t.auth(user), 'Content-Type': 'application/json' });

  /** Starts a sync weather turn and resolves once it waits on the held weather service; `answer` is its response. */
  async function syncTurnWaitingOnWeather(on: TestApp, user: string, session: string) {
    weather.hold();
    const inFlight = weather.nextRequest();
    const answer = request(on.app.getHttpServer())
      .post('/api/chat')
      .set(on.auth(user))
      .send({ message: 'weather in Paris', session_id: session })
      .then((r) => r);
    await inFlight;
    return { answer };
  }

  it('answers 404, not 409, to another user posting into a new session whose first turn still runs', async () => {
    const owner = uniqueUser('owner');
    const session = randomUUID();
    weather.hold();
    const inFlight = weather.nextRequest();
    const stream = await openSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: json(owner),
      body: JSON.stringify({ message: 'weather in Paris', session_id: session }),
    });
    await inFlight;
    const intruder = uniqueUser('intruder');
    const sync = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(intruder)).send({ message: 'hi', session_id: session });
    expect(sync.status).toBe(404);
    await request(t.app.getHttpServer()).post('/api/chat/stream').set(t.auth(intruder)).send({ message: 'hi', session_id: session }).expect(404);
    await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(intruder)).expect(404);
    // The owner sees the session at once, and is told its turn is still running.
    const mine = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(owner)).expect(200);
    expect(mine.body.messages).toEqual([]);
    await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(owner)).send({ message: 'again', session_id: session }).expect(409);
    weather.release();
    await stream.ended;
    expect(stream.events.at(-1)!.event).toBe('done');
    const after = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(owner)).expect(200);
    expect(after.body.messages.map((m: { type: string }) => m.type)).toEqual(['human', 'ai']);
  });

  it('a delete during a streaming turn wins: the turn cannot commit and nothing of the session is left', async () => {
    const user = uniqueUser('deleter');
    weather.hold();
    const inFlight = weather.nextRequest();
    const stream = await openSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: json(user),
      body: JSON.stringify({ message: 'weather in Berlin?' }),
    });
    const metadata = await stream.waitFor((e) => e.event === 'metadata');
    const { session_id, run_id } = metadata.data;
    await inFlight;
    await request(t.app.getHttpServer()).delete(`/api/sessions/${session_id}`).set(t.auth(user)).expect(200);
    weather.release();
    await stream.ended;
    const last = stream.events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ code: 'session_deleted', message_saved: false });
    await request(t.app.getHttpServer()).get(`/api/sessions/${session_id}/messages`).set(t.auth(user)).expect(404);
    const list = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(list.body.sessions).toEqual([]);
    expect(await leftovers(t, session_id, [run_id])).toEqual(NOTHING);
    // The run went with its session.
    await request(t.app.getHttpServer()).get(`/api/chat/runs/${run_id}/stream`).set(t.auth(user)).expect(404);
  });

  it('a delete during a sync turn answers the turn 404 and leaves nothing behind', async () => {
    const user = uniqueUser('sync-deleter');
    const session = randomUUID();
    const { answer: turn } = await syncTurnWaitingOnWeather(t, user, session);
    await request(t.app.getHttpServer()).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
    weather.release();
    const res = await turn;
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/deleted while the turn ran/);
    const [{ runs }] = await t.dataSource.query('SELECT count(*)::int AS runs FROM chat_runs WHERE session_id = $1', [session]);
    expect(runs).toBe(0);
    expect(await leftovers(t, session, [])).toMatchObject({ sessions: 0, messages: 0, runs: 0 });
  });

  it('a session deleted and created again under its id never serves a cached copy of its earlier life', async () => {
    const user = uniqueUser('aba');
    const session = randomUUID();
    const cache = t.app.get(ResilientCache);
    await t.storage.appendTurn(user, session, [
      { type: 'human', content: 'OLD secret' },
      { type: 'ai', content: 'OLD answer' },
    ]);
    await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    const oldCopy = await cache.get(messagesCacheKey(user, session));
    expect(oldCopy).toBeDefined();
    await request(t.app.getHttpServer()).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
    await t.storage.openSession(user, session, 'again');
    await t.storage.appendTurn(
      user,
      session,
      [
        { type: 'human', content: 'NEW question' },
        { type: 'ai', content: 'NEW answer' },
      ],
      { createIfMissing: false },
    );
    // The delete of the old copy was lost (a Redis stall, another instance's late write): it is back in the cache.
    await cache.set(messagesCacheKey(user, session), oldCopy);
    const res = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(res.body.messages.map((m: { content: string }) => m.content)).toEqual(['NEW question', 'NEW answer']);
  });

  it('a run given up as abandoned (its heartbeat looked stale) cannot commit afterwards', async () => {
    const user = uniqueUser('fenced');
    const session = randomUUID();
    const { answer: turn } = await syncTurnWaitingOnWeather(t, user, session);
    // Another instance decides the run is dead: its heartbeat is older than RUN_STALE_AFTER_MS.
    const [[{ id: runId }]] = await t.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - interval '1 hour' WHERE session_id = $1 RETURNING id`, [session]);
    const other = await createTestApp();
    try {
      expect(await other.app.get(RunRegistry).status(runId)).toBe('abandoned');
    } finally {
      await other.close();
    }
    weather.release();
    const res = await turn;
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/given up as lost.*Nothing was saved/);
    const transcript = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(transcript.body.messages).toEqual([]);
    const [{ status }] = await t.dataSource.query('SELECT status FROM chat_runs WHERE id = $1', [runId]);
    expect(status).toBe('abandoned');
    await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'weather in Paris', session_id: session }).expect(200);
  });

  it('a run whose heartbeats were late past the stale limit, and that nobody gave up, says it is alive again and commits', async () => {
    // A stale limit of an hour: no sweep of stale runs gives this run up while the test looks at it.
    const own = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RUN_HEARTBEAT_MS: '200', RUN_STALE_AFTER_MS: '3600000' });
    try {
      const user = uniqueUser('late-but-alive');
      const session = randomUUID();
      const { answer: turn } = await syncTurnWaitingOnWeather(own, user, session);
      // Its heartbeats did not reach the server for longer than RUN_STALE_AFTER_MS (a database stall, a long pause).
      const [[{ id: runId }]] = await own.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() - interval '2 hours' WHERE session_id = $1 RETURNING id`, [session]);
      const heartbeatAge = async () => Number((await own.dataSource.query(`SELECT extract(epoch FROM now() - heartbeat_at) AS age FROM chat_runs WHERE id = $1`, [runId]))[0].age);
      // The run still works, so a heartbeat brings it back (before this, its heartbeat stayed two hours old).
      await waitUntil(async () => (await heartbeatAge()) < 60, 'the run to record a fresh heartbeat');
      weather.release();
      const res = await turn;
      expect(res.status).toBe(200);
      const [{ status }] = await own.dataSource.query('SELECT status FROM chat_runs WHERE id = $1', [runId]);
      expect(status).toBe('done');
    } finally {
      await own.close();
    }
  });

  it('takes session ids in any case and answers with one spelling', async () => {
    const user = uniqueUser('upper');
    const session = randomUUID();
    const res = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'hello', session_id: session.toUpperCase() }).expect(200);
    expect(res.body.session_id).toBe(session);
    const transcript = await request(t.app.getHttpServer()).get(`/api/sessions/${session.toUpperCase()}/messages`).set(t.auth(user)).expect(200);
    expect(transcript.body.session_id).toBe(session);
    expect(transcript.body.messages).toHaveLength(2);
  });

  it('text the database cannot store is refused before it reaches a paused question, which still waits for its answer', async () => {
    const user = uniqueUser('paused-hostile');
    const server = t.app.getHttpServer();
    const paused = await request(server).post('/api/chat').set(t.auth(user)).send({ message: 'How long is the Aurora warranty?' }).expect(200);
    const session = paused.body.session_id;
    expect(paused.body.pending_hitl).not.toBeNull();
    for (const hostile of ['Aurora X1\u0000', 'Aurora X1\ud800', '\u200b \u200d']) {
      await request(server).post('/api/chat').set(t.auth(user)).send({ message: hostile, session_id: session }).expect(400);
    }
    const list = await request(server).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(list.body.sessions[0].pending_hitl?.task_id).toBe(paused.body.pending_hitl.task_id);
    const resumed = await request(server).post('/api/chat').set(t.auth(user)).send({ message: 'Aurora X1', session_id: session }).expect(200);
    expect(resumed.body.rag_trace).toMatchObject({ hitl_resumed: true, user_supplement: 'Aurora X1' });
  });

  it("says the message was NOT saved when the turn's commit and the keeping of its message time out on a lock", async () => {
    const strict = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, DATABASE_LOCK_TIMEOUT_MS: '300' });
    const blocker = t.dataSource.createQueryRunner();
    try {
      const user = uniqueUser('unknown-outcome');
      const session = randomUUID();
      const { answer: turn } = await syncTurnWaitingOnWeather(strict, user, session);
      // Another transaction holds the session row: the turn's commit, and then the attempt to keep its message, time out on the
      // lock. The server answered both (lock_timeout): neither landed, and the client is told so, not "not known".
      await blocker.connect();
      await blocker.startTransaction();
      await blocker.query('SELECT id FROM chat_sessions WHERE id = $1 FOR UPDATE', [session]);
      weather.release();
      const res = await turn;
      expect({ status: res.status, message_saved: res.body.message_saved }).toEqual({ status: 503, message_saved: false });
      expect(res.body.message).toMatch(/Your message was NOT saved/);
      await blocker.rollbackTransaction();
      const transcript = await request(strict.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(strict.auth(user)).expect(200);
      expect(transcript.body.messages).toEqual([]);
    } finally {
      if (blocker.isTransactionActive) await blocker.rollbackTransaction();
      await blocker.release();
      await strict.close();
    }
  });

  it("deleting a session with a paused question removes the paused task's checkpoint and runs", async () => {
    const user = uniqueUser('paused-delete');
    const paused = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'How long is the Aurora warranty?' }).expect(200);
    const taskId: string = paused.body.pending_hitl.task_id;
    const session: string = paused.body.session_id;
    const before = await leftovers(t, session, [taskId]);
    expect(before.checkpoints).toBeGreaterThan(0);
    expect(before.runs).toBe(1);
    await request(t.app.getHttpServer()).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
    expect(await leftovers(t, session, [taskId])).toEqual(NOTHING);
  });
});
