import { randomUUID } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { OwnRedis } from './support/own-redis.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { waitUntil } from './support/service-process.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { testDatabaseUrl } from './support/test-env.js';

interface StoredTurn {
  run: string | undefined;
  messages: Array<[type: string, status: string, content: string]>;
}

/** Reads what is stored on a connection of its own, straight to PostgreSQL (past any proxy of the app's). */
let direct: pg.Pool;

/** The run and the messages stored for the user's only session. */
async function storedTurn(user: string): Promise<StoredTurn> {
  const {
    rows: [run],
  } = await direct.query(`SELECT status FROM chat_runs WHERE user_id = $1 ORDER BY created_at DESC LIMIT 1`, [user]);
  const { rows: messages } = await direct.query(
    `SELECT m.type, m.status, m.content FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id WHERE s.user_id = $1 ORDER BY m.seq`,
    [user],
  );
  return { run: run?.status, messages: messages.map((m: { type: string; status: string; content: string }) => [m.type, m.status, m.content]) };
}

/**
 * What a turn tells its client is what is stored (issue 21 item 4): a
 * COMMIT whose reply is lost on the way back, and a run cancelled from
 * another instance while Redis is paused.
 */
describe('A turn tells its client what was stored', () => {
  const weather = new FakeWeatherServer();

  /** Starts a sync weather turn on `on` for `user`; resolves once it waits on the held weather service, with its answer to come. */
  async function syncTurnHeldInWeather(on: TestApp, user: string) {
    weather.hold();
    const arrived = weather.nextRequest();
    const turn = request(on.app.getHttpServer())
      .post('/api/chat')
      .set(on.auth(user))
      .send({ message: 'weather in Paris' })
      .then((r) => r);
    await arrived;
    return { turn };
  }
  const weatherEnv = () => ({
    KNOWLEDGE_SEED_ON_START: 'false',
    RATE_LIMIT_CHAT_PER_MINUTE: '0',
    WEATHER_BASE_URL: weather.url,
    WEATHER_GEOCODING_URL: weather.url,
  });
  beforeAll(async () => {
    direct = new pg.Pool({ connectionString: testDatabaseUrl(), max: 2 });
    await weather.start();
  });
  afterEach(() => weather.release());
  afterAll(async () => {
    await weather.stop();
    await direct.end();
  });

  describe('when the reply to the turn’s COMMIT is lost', () => {
    let proxy: TcpProxy;
    let t: TestApp;
    let base: string;

    beforeAll(async () => {
      const database = new URL(testDatabaseUrl());
      proxy = await new TcpProxy(database.hostname, Number(database.port || 5432)).start();
      database.port = String(proxy.port);
      t = await createTestApp({
        ...weatherEnv(),
        DATABASE_URL: database.toString(),
        DATABASE_STATEMENT_TIMEOUT_MS: '1000',
        DATABASE_LOCK_TIMEOUT_MS: '2000',
        // Heartbeats come while the lost reply is awaited, and read the run's real status.
        RUN_HEARTBEAT_MS: '100',
        RUN_STALE_AFTER_MS: '10000',
      });
      base = await t.listen();
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await proxy?.stop();
    });

    /** Arms the lost reply for the turn's own commit: the COMMIT after its messages were written. */
    const loseCommitReply = (deliver: boolean) => proxy.loseReplyTo('COMMIT', { after: 'INSERT INTO chat_messages', deliver });

    it('a sync turn whose COMMIT landed answers 200 with the stored answer', async () => {
      const user = uniqueUser('lost-reply-sync');
      const { turn } = await syncTurnHeldInWeather(t, user);
      const struck = loseCommitReply(true);
      weather.release();
      const res = await turn;
      await struck;
      const stored = await storedTurn(user);
      expect({ status: res.status, body: res.body.response ?? res.body }).toEqual({ status: 200, body: stored.messages[1]?.[2] });
      expect(stored).toEqual({
        run: 'done',
        messages: [
          ['human', 'complete', 'weather in Paris'],
          ['ai', 'complete', expect.any(String)],
        ],
      });
    }, 60_000);

    it('a streamed turn whose COMMIT landed ends with done and the stored answer', async () => {
      const user = uniqueUser('lost-reply-stream');
      const { stream } = await heldWeatherTurn(base, t.auth(user), weather);
      const struck = loseCommitReply(true);
      weather.release();
      await stream.ended;
      await struck;
      const stored = await storedTurn(user);
      expect(stored.run).toBe('done');
      expect(stream.events.at(-1)).toEqual(expect.objectContaining({ event: 'done', data: expect.objectContaining({ response: stored.messages[1]?.[2] }) }));
      expect(stored.messages.map(([type, status]) => [type, status])).toEqual([
        ['human', 'complete'],
        ['ai', 'complete'],
      ]);
    }, 60_000);

    it('a cancel that comes while the reply to a landed COMMIT is lost leaves the turn as stored, and the client is told so', async () => {
      const user = uniqueUser('cancel-during-commit');
      const { turn } = await syncTurnHeldInWeather(t, user);
      const struck = loseCommitReply(true);
      weather.release();
      await struck;
      // The user presses cancel while the turn waits for the answer to its COMMIT (which landed).
      const {
        rows: [{ id: runId }],
      } = await direct.query(`SELECT id FROM chat_runs WHERE user_id = $1`, [user]);
      await request(t.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(t.auth(user)).expect(200);
      const res = await turn;
      const stored = await storedTurn(user);
      expect(stored.run).toBe('done');
      expect({ status: res.status, body: res.body.response ?? res.body }).toEqual({ status: 200, body: stored.messages[1]?.[2] });
    }, 60_000);

    it('a sync turn whose COMMIT never reached the server says its message was kept, as it is', async () => {
      const user = uniqueUser('lost-commit-sync');
      const { turn } = await syncTurnHeldInWeather(t, user);
      const struck = loseCommitReply(false);
      weather.release();
      const res = await turn;
      await struck;
      const stored = await storedTurn(user);
      expect({ status: res.status, code: res.body.code, message_saved: res.body.message_saved }).toEqual({
        status: 503,
        code: 'storage_unavailable',
        message_saved: true,
      });
      expect(stored).toEqual({ run: 'error', messages: [['human', 'failed', 'weather in Paris']] });
    }, 60_000);

    it('a turn whose claim COMMIT landed without an answer does not hold the session for the retry', async () => {
      const user = uniqueUser('lost-claim');
      const sessionId = randomUUID();
      const struck = proxy.loseReplyTo('COMMIT', { after: 'INSERT INTO chat_runs', deliver: true });
      const first = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello', session_id: sessionId });
      await struck;
      expect({ status: first.status, code: first.body.code }).toEqual({ status: 503, code: 'storage_unavailable' });
      const retry = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello', session_id: sessionId });
      expect({ status: retry.status, code: retry.body.code }).toEqual({ status: 200, code: undefined });
      expect((await storedTurn(user)).messages.map(([type, status]) => [type, status])).toEqual([
        ['human', 'complete'],
        ['ai', 'complete'],
      ]);
    }, 60_000);

    it('a sync turn whose COMMIT and read-back both go unanswered says message_saved null, and the session moves on', async () => {
      const user = uniqueUser('lost-commit-unknown');
      const { turn } = await syncTurnHeldInWeather(t, user);
      const struck = loseCommitReply(false);
      weather.release();
      await struck;
      // From now on nothing reaches PostgreSQL: reading back what landed cannot answer either.
      proxy.hold();
      let res;
      try {
        res = await turn;
      } finally {
        proxy.release();
      }
      expect({ status: res.status, code: res.body.code, message_saved: res.body.message_saved }).toEqual({
        status: 503,
        code: 'storage_unavailable',
        message_saved: null,
      });
      expect(res.body.message).toMatch(/Whether your message was saved is not known yet/);
      // "Not known yet" holds whichever way it went; once the run ended, what is stored is one of the two.
      await waitUntil(async () => (await storedTurn(user)).run !== 'running', 'the failed run to end', 30_000, 50);
      expect([
        { run: 'error', messages: [] },
        { run: 'error', messages: [['human', 'failed', 'weather in Paris']] },
      ]).toContainEqual(await storedTurn(user));
      const sessionId = (await direct.query(`SELECT id FROM chat_sessions WHERE user_id = $1`, [user])).rows[0].id;
      await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello', session_id: sessionId }).expect(200);
    }, 60_000);
  });

  describe('when a run is cancelled from another instance while Redis is paused', () => {
    const redis = new OwnRedis();
    let a: TestApp;
    let b: TestApp;
    let baseA: string;

    beforeAll(async () => {
      await redis.start();
      const env = {
        ...weatherEnv(),
        REDIS_URL: redis.url(0),
        CACHE_COMMAND_TIMEOUT_MS: '100',
        RUN_CANCEL_WAIT_MS: '100',
        // No heartbeat comes during these turns: the run learns of the cancel from its own commit.
        RUN_HEARTBEAT_MS: '60000',
        RUN_STALE_AFTER_MS: '120000',
      };
      [a, b] = await Promise.all([createTestApp(env), createTestApp(env)]);
      baseA = await a.listen();
    }, 60_000);
    afterEach(async () => {
      await redis.resume().catch(() => undefined);
    });
    afterAll(async () => {
      await Promise.allSettled([a?.close(), b?.close()]);
      await redis.destroy();
    });

    const cancelOnB = async (user: string, runId: string) => {
      await redis.pause();
      const cancel = await request(b.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(b.auth(user));
      return { status: cancel.status, run: cancel.body.status };
    };

    it('a sync turn answers 409 cancelled with its message kept, as stored', async () => {
      const user = uniqueUser('cancel-paused-sync');
      const { turn } = await syncTurnHeldInWeather(a, user);
      const {
        rows: [{ id: runId }],
      } = await direct.query(`SELECT id FROM chat_runs WHERE user_id = $1`, [user]);
      expect(await cancelOnB(user, runId)).toEqual({ status: 200, run: 'cancelled' });
      weather.release();
      const res = await turn;
      expect({ status: res.status, code: res.body.code, message_saved: res.body.message_saved }).toEqual({
        status: 409,
        code: 'cancelled',
        message_saved: true,
      });
      expect(await storedTurn(user)).toEqual({ run: 'cancelled', messages: [['human', 'cancelled', 'weather in Paris']] });
    }, 60_000);

    it('a streamed turn ends with error cancelled, message kept, as stored', async () => {
      const user = uniqueUser('cancel-paused-stream');
      const { stream, runId } = await heldWeatherTurn(baseA, a.auth(user), weather);
      expect(await cancelOnB(user, runId)).toEqual({ status: 200, run: 'cancelled' });
      weather.release();
      await stream.ended;
      expect(stream.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'cancelled', message_saved: true } });
      expect(stream.events.some((event) => event.event === 'done')).toBe(false);
      expect(await storedTurn(user)).toEqual({ run: 'cancelled', messages: [['human', 'cancelled', 'What is the weather in Paris?']] });
    }, 60_000);
  });
});
