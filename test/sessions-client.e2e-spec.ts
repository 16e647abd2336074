import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createClient } from '@keyv/redis';
import { messagesCacheKey, sessionsCacheKey } from '../src/session/session-cache-keys.js';
import type { NewMessage } from '../src/session/message.repository.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_REDIS_URL } from './support/test-env.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { openSse } from './support/sse-client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Message {
  id: string;
  seq: number;
  type: string;
  status: string;
  run_id: string | null;
  content: string;
  feedback: { rating: string; comment: string | null; updated_at: string } | null;
}

interface Session {
  session_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  active_run: { run_id: string; started_at: string } | null;
}

/** Messages, sessions and feedback as web clients use them (issue #11, item 5), on the real PostgreSQL and Redis. */
describe('Sessions for web clients', () => {
  let t: TestApp;
  let other: TestApp;
  let base: string;
  const weather = new FakeWeatherServer();
  const redis = createClient({ url: TEST_REDIS_URL });

  beforeAll(async () => {
    await weather.start();
    const env = { WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url };
    t = await createTestApp(env);
    // A second instance on the same database and Redis.
    other = await createTestApp(env);
    base = await t.listen();
    await redis.connect();
  });
  afterAll(async () => {
    await redis.quit();
    await other?.close();
    await t?.close();
    await weather.stop();
  });

  const api = (app: TestApp = t) => request(app.app.getHttpServer());

  async function turn(user: string, session: string, question: string, answer = `answer to ${question}`) {
    return t.storage.appendTurn(user, session, [
      { type: 'human', content: question },
      { type: 'ai', content: answer },
    ]);
  }

  async function messages(user: string, session: string, query: Record<string, string | number> = {}, app = t) {
    return (await api(app).get(`/api/sessions/${session}/messages`).query(query).set(app.auth(user)).expect(200)).body as {
      messages: Message[];
      next_before: number | null;
    };
  }

  async function sessions(user: string, query: Record<string, string | number> = {}, app = t): Promise<Session[]> {
    return (await api(app).get('/api/sessions').query(query).set(app.auth(user)).expect(200)).body.sessions;
  }

  /**
   * Puts back what the cache held before a write, as if the write's
   * invalidation had been lost (Redis stalled): the reads that follow must
   * still show the write.
   */
  async function restoreStaleCopy(key: string, write: () => Promise<unknown>): Promise<void> {
    const stale = await redis.get(key);
    expect(stale).not.toBeNull();
    await write();
    await redis.set(key, stale!, { EX: 300 });
  }

  describe('MessageInfo', () => {
    it('carries a stable id, seq, status, run_id and feedback, the same from the database, the cache and another instance', async () => {
      const user = uniqueUser('fields');
      const session = randomUUID();
      const runId = randomUUID();
      const stored: NewMessage[] = [
        { type: 'human', content: 'How do I reset the router?', run_id: runId },
        { type: 'ai', content: 'Hold the button', run_id: runId, status: 'cancelled' },
      ];
      await t.storage.appendTurn(user, session, stored);
      await t.storage.appendTurn(user, session, [{ type: 'human', content: 'and then?', status: 'failed' }]);

      const cold = await messages(user, session);
      expect(cold.next_before).toBeNull();
      expect(cold.messages).toEqual([
        expect.objectContaining({ seq: 1, type: 'human', status: 'complete', run_id: runId, feedback: null }),
        expect.objectContaining({ seq: 2, type: 'ai', status: 'cancelled', run_id: runId, feedback: null }),
        expect.objectContaining({ seq: 3, type: 'human', status: 'failed', run_id: null, feedback: null }),
      ]);
      for (const message of cold.messages) expect(message.id).toMatch(UUID);
      expect(new Set(cold.messages.map((m) => m.id)).size).toBe(3);

      expect(await redis.exists(messagesCacheKey(user, session))).toBe(1);
      const cached = await messages(user, session);
      const elsewhere = await messages(user, session, {}, other);
      expect(cached).toEqual(cold);
      expect(elsewhere).toEqual(cold);

      // Ids do not move when the transcript grows, and the database holds them.
      await turn(user, session, 'one more');
      const grown = await messages(user, session);
      expect(grown.messages.slice(0, 3)).toEqual(cold.messages);
      const rows: Array<{ public_id: string }> = await t.dataSource.query('SELECT public_id::text AS public_id FROM chat_messages WHERE session_id = $1 ORDER BY seq', [session]);
      expect(rows.map((r) => r.public_id)).toEqual(grown.messages.map((m) => m.id));
    });

    it('gives rows written without the new columns (as before the migration) an id and status complete', async () => {
      const user = uniqueUser('legacy');
      const session = randomUUID();
      await turn(user, session, 'stored by the service');
      await t.dataSource.query(`INSERT INTO chat_messages (session_id, seq, type, content) VALUES ($1, 3, 'human', 'stored by plain SQL')`, [session]);
      await t.dataSource.query(`UPDATE chat_sessions SET message_count = 3, version = nextval('chat_cache_version_seq') WHERE id = $1`, [session]);
      const { messages: all } = await messages(user, session);
      expect(all[2]).toMatchObject({ seq: 3, content: 'stored by plain SQL', status: 'complete', run_id: null, feedback: null });
      expect(all[2].id).toMatch(UUID);
      await expect(t.dataSource.query(`UPDATE chat_messages SET status = 'weird' WHERE session_id = $1`, [session])).rejects.toThrow(/chk_chat_messages_status/);
    });
  });

  describe('GET /api/sessions/:id/messages?before&limit', () => {
    const user = uniqueUser('pages');
    const session = randomUUID();

    beforeAll(async () => {
      const seven: NewMessage[] = Array.from({ length: 7 }, (_, i) => ({
        type: i % 2 === 0 ? 'human' : 'ai',
        content: `message ${i + 1}`,
      }));
      await t.storage.appendTurn(user, session, seven);
    });

    async function walkBack(app: TestApp): Promise<number[][]> {
      const pages: number[][] = [];
      let before: number | null | undefined;
      do {
        const page = await messages(user, session, { limit: 3, ...(before ? { before } : {}) }, app);
        pages.push(page.messages.map((m) => m.seq));
        before = page.next_before;
      } while (before !== null && pages.length < 10);
      return pages;
    }

    it('pages newest-last from the end back to the start, from the database and from the cache alike', async () => {
      await redis.del(messagesCacheKey(user, session));
      expect(await walkBack(t)).toEqual([[5, 6, 7], [2, 3, 4], [1]]);
      expect(await redis.exists(messagesCacheKey(user, session))).toBe(0); // a page alone does not fill the cache

      await messages(user, session); // the whole transcript, now cached
      expect(await redis.exists(messagesCacheKey(user, session))).toBe(1);
      expect(await walkBack(t)).toEqual([[5, 6, 7], [2, 3, 4], [1]]);
      expect(await walkBack(other)).toEqual([[5, 6, 7], [2, 3, 4], [1]]);

      const page = await messages(user, session, { before: 4, limit: 2 });
      expect(page.messages.map((m) => m.content)).toEqual(['message 2', 'message 3']);
      expect(page.next_before).toBe(2);
      // Exactly the start: nothing older, so no next page.
      expect((await messages(user, session, { before: 3, limit: 2 })).next_before).toBeNull();
      // `before` alone: everything before it.
      expect((await messages(user, session, { before: 3 })).messages.map((m) => m.seq)).toEqual([1, 2]);
      expect(await messages(user, session, { before: 1, limit: 5 })).toMatchObject({ messages: [], next_before: null });
      expect((await messages(user, session, { limit: 200 })).messages).toHaveLength(7);
    });

    it('sees a new turn at once even when a stale transcript is left in the cache', async () => {
      const pager = uniqueUser('pages-stale');
      const id = randomUUID();
      await turn(pager, id, 'first');
      await messages(pager, id);
      await restoreStaleCopy(messagesCacheKey(pager, id), () => turn(pager, id, 'second'));
      const page = await messages(pager, id, { limit: 1 }, other);
      expect(page.messages.map((m) => m.content)).toEqual(['answer to second']);
      expect(page.next_before).toBe(4);
    });

    it.each([
      ['limit', '0'],
      ['limit', '201'],
      ['limit', '1.5'],
      ['limit', '-1'],
      ['limit', 'abc'],
      ['limit', '1e2'],
      ['limit', ' 5'],
      ['limit', ''],
      ['before', '0'],
      ['before', '-3'],
      ['before', '12345678901'],
      ['before', '9'.repeat(5000)],
      ['before', '0x10'],
    ])('refuses %s=%j with 400', async (name, value) => {
      const res = await api()
        .get(`/api/sessions/${session}/messages`)
        .query({ [name]: value })
        .set(t.auth(user))
        .expect(400);
      expect(res.body.message).toContain(name);
    });

    it('refuses repeated or unknown parameters, and answers 404 for a foreign or missing session', async () => {
      await api().get(`/api/sessions/${session}/messages?limit=1&limit=2`).set(t.auth(user)).expect(400);
      await api().get(`/api/sessions/${session}/messages?after=3`).set(t.auth(user)).expect(400);
      await api()
        .get(`/api/sessions/${session}/messages?limit=2`)
        .set(t.auth(uniqueUser('intruder')))
        .expect(404);
      await api().get(`/api/sessions/${randomUUID()}/messages?limit=2&before=3`).set(t.auth(user)).expect(404);
    });
  });

  describe('SessionInfo', () => {
    it('carries created_at, kept by later turns', async () => {
      const user = uniqueUser('created');
      const session = randomUUID();
      await turn(user, session, 'first');
      const [first] = await sessions(user);
      expect(Date.parse(first.created_at)).not.toBeNaN();
      await turn(user, session, 'second');
      const [later] = await sessions(user, {}, other);
      expect(later.created_at).toBe(first.created_at);
      expect(Date.parse(later.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
      expect(Date.parse(later.created_at)).toBeLessThanOrEqual(Date.parse(later.updated_at));
    });

    it('names the running run in active_run while a turn runs, on every instance and through a cached list, and null after', async () => {
      const user = uniqueUser('active');
      const session = randomUUID();
      const idle = randomUUID();
      await turn(user, idle, 'an idle session');
      await turn(user, session, 'an earlier turn');
      // Both lists cached before the turn starts: starting a turn in an existing session does not move the list version.
      expect((await sessions(user)).map((s) => s.active_run)).toEqual([null, null]);
      expect(await redis.exists(sessionsCacheKey(user))).toBe(1);

      weather.hold();
      const asked = weather.nextRequest();
      const stream = await openSse(`${base}/api/chat/stream`, {
        method: 'POST',
        headers: { ...t.auth(user), 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'What is the weather in Paris?', session_id: session }),
      });
      try {
        const metadata = await stream.waitFor((e) => e.event === 'metadata');
        await asked; // the turn waits on the weather service
        for (const app of [t, other]) {
          const list = await sessions(user, {}, app);
          const running = list.find((s) => s.session_id === session)!;
          expect(running.active_run).toEqual({ run_id: metadata.data.run_id, started_at: expect.any(String) });
          expect(Date.parse(running.active_run!.started_at)).not.toBeNaN();
          expect(list.find((s) => s.session_id === idle)!.active_run).toBeNull();
          // A cursor page and a search read it too.
          const searched = await sessions(user, { q: 'earlier' }, app);
          expect(searched.map((s) => s.active_run?.run_id)).toEqual([metadata.data.run_id]);
        }
        const renamed = await api().patch(`/api/sessions/${session}`).set(t.auth(user)).send({ title: 'busy' }).expect(200);
        expect(renamed.body.active_run.run_id).toBe(metadata.data.run_id);
        // One session by id, wherever it is in the list (a client reloading a page deep in the list rejoins its run).
        for (const app of [t, other]) {
          const one = await request(app.app.getHttpServer()).get(`/api/sessions/${session}`).set(app.auth(user)).expect(200);
          expect(one.body).toMatchObject({ session_id: session, title: 'busy', active_run: { run_id: metadata.data.run_id } });
        }
      } finally {
        weather.release();
      }
      await stream.ended;
      expect(stream.events.at(-1)!.event).toBe('done');
      for (const app of [t, other]) {
        expect((await sessions(user, {}, app)).map((s) => s.active_run)).toEqual([null, null]);
      }
    });

    it("answers one session by id, and 404 for another user's, a missing or a malformed id", async () => {
      const user = uniqueUser('one-session');
      const session = randomUUID();
      await turn(user, session, 'hello there');
      const one = await api().get(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
      expect(one.body).toEqual({
        session_id: session,
        title: expect.any(String),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        message_count: 2,
        pending_hitl: null,
        active_run: null,
        collection_ids: null,
      });
      await api()
        .get(`/api/sessions/${session}`)
        .set(t.auth(uniqueUser('stranger')))
        .expect(404);
      await api().get(`/api/sessions/${randomUUID()}`).set(t.auth(user)).expect(404);
      await api().get('/api/sessions/not-a-uuid').set(t.auth(user)).expect(400);
    });

    it('does not report a run whose heartbeat stopped (its instance died)', async () => {
      const user = uniqueUser('dead-run');
      const session = randomUUID();
      await turn(user, session, 'q');
      await t.dataSource.query(`INSERT INTO chat_runs (id, session_id, user_id, status, heartbeat_at) VALUES ($1, $2, $3, 'running', now() - INTERVAL '1 hour')`, [
        randomUUID(),
        session,
        user,
      ]);
      expect((await sessions(user))[0].active_run).toBeNull();
      expect((await sessions(user, { q: 'q' }))[0].active_run).toBeNull();
    });
  });

  describe('PATCH /api/sessions/:id', () => {
    it('renames, trimmed, and returns the SessionInfo; visible at once on another instance despite a stale cached list', async () => {
      const user = uniqueUser('rename');
      const session = randomUUID();
      const older = randomUUID();
      await turn(user, older, 'older session');
      await turn(user, session, 'first question');
      const before = await sessions(user, {}, other); // cached, as the other instance saw it
      expect(before[0].title).toBe('first question');

      let res: request.Response | undefined;
      await restoreStaleCopy(sessionsCacheKey(user), async () => {
        res = await api().patch(`/api/sessions/${session}`).set(t.auth(user)).send({ title: '  Router 问题  ' }).expect(200);
      });
      expect(res!.body).toEqual({
        session_id: session,
        title: 'Router 问题',
        created_at: before[0].created_at,
        updated_at: before[0].updated_at,
        message_count: 2,
        pending_hitl: null,
        active_run: null,
        collection_ids: null,
      });
      const after = await sessions(user, {}, other);
      expect(after.map((s) => [s.session_id, s.title])).toEqual([
        [session, 'Router 问题'],
        [older, 'older session'],
      ]);
      // A later turn keeps the chosen title.
      await turn(user, session, 'next question');
      expect((await sessions(user))[0].title).toBe('Router 问题');
    });

    it('stores right-to-left, emoji and exactly 200-character titles unchanged', async () => {
      const user = uniqueUser('rename-text');
      const session = randomUUID();
      await turn(user, session, 'q');
      for (const title of ['مرحبا بالعالم \u202eabc\u202c', '👩‍💻 ❤️ 退货', 'x'.repeat(200), '❤️'.repeat(100), '%_\\']) {
        const res = await api().patch(`/api/sessions/${session}`).set(t.auth(user)).send({ title }).expect(200);
        expect(res.body.title).toBe(title);
        expect((await sessions(user, {}, other))[0].title).toBe(title);
      }
    });

    it.each([
      ['empty', ''],
      ['white space only', ' \t\n '],
      ['invisible only', '\u200b\u200d\u2060'],
      ['a NUL', 'a\u0000b'],
      ['a lone surrogate', 'a\ud800b'],
      ['201 characters', 'y'.repeat(201)],
      ['201 code points counted as 101 by UTF-16 tools', '❤️'.repeat(100) + 'z'],
      ['half a megabyte', 'z'.repeat(500_000)],
      ['a number', 42],
      ['null', null],
    ])('refuses a title with %s (400) and keeps the old one', async (_what, title) => {
      const user = uniqueUser('rename-bad');
      const session = randomUUID();
      await turn(user, session, 'kept title');
      const res = await api().patch(`/api/sessions/${session}`).set(t.auth(user)).send({ title }).expect(400);
      expect(res.body.message).toMatch(/title/);
      expect((await sessions(user))[0].title).toBe('kept title');
    });

    it("answers 404 for another user's or a missing session, 400 for a bad id or body, 413 for a body over the limit", async () => {
      const owner = uniqueUser('rename-owner');
      const session = randomUUID();
      await turn(owner, session, 'mine');
      const intruder = uniqueUser('rename-intruder');
      const foreign = await api().patch(`/api/sessions/${session}`).set(t.auth(intruder)).send({ title: 'stolen' }).expect(404);
      const missing = await api().patch(`/api/sessions/${randomUUID()}`).set(t.auth(owner)).send({ title: 'x' }).expect(404);
      expect(foreign.body.message.replace(session, 'ID')).toBe(missing.body.message.replace(/[0-9a-f-]{36}/, 'ID'));
      await api().patch('/api/sessions/not-a-uuid').set(t.auth(owner)).send({ title: 'x' }).expect(400);
      await api().patch(`/api/sessions/${session}`).set(t.auth(owner)).send({ title: 'x', user_id: intruder }).expect(400);
      await api().patch(`/api/sessions/${session}`).set(t.auth(owner)).send({}).expect(400);
      await api()
        .patch(`/api/sessions/${session}`)
        .set(t.auth(owner))
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ title: 't'.repeat(2 * 1024 * 1024) }))
        .expect(413);
      expect((await sessions(owner))[0].title).toBe('mine');
      expect(await sessions(intruder)).toEqual([]);
    });
  });

  describe('GET /api/sessions?q=', () => {
    const user = uniqueUser('search');
    const ids: Record<string, string> = {};
    const titles = ['退货政策是什么？', 'Aurora X1 router', 'AURORA x2 manual', '100% sure_thing', 'back\\slash', 'ÉCOLE Straße'];

    beforeAll(async () => {
      for (const title of titles) {
        ids[title] = randomUUID();
        await turn(user, ids[title], title);
      }
      await turn(uniqueUser('search-other'), randomUUID(), 'Aurora of someone else');
    });

    const found = async (q: string, extra: Record<string, string | number> = {}) => (await sessions(user, { q, ...extra })).map((s) => s.title);

    it("matches titles case-insensitively, Chinese and accented letters too, newest first, only the caller's", async () => {
      expect(await found('aurora')).toEqual(['AURORA x2 manual', 'Aurora X1 router']);
      expect(await found('AuRoRa X1')).toEqual(['Aurora X1 router']);
      expect(await found('货政')).toEqual(['退货政策是什么？']);
      expect(await found('école')).toEqual(['ÉCOLE Straße']);
      expect(await found('no such title')).toEqual([]);
      expect(await found('')).toHaveLength(titles.length); // empty: no filter
    });

    it('takes %, _ and \\ literally', async () => {
      expect(await found('%')).toEqual(['100% sure_thing']);
      expect(await found('_')).toEqual(['100% sure_thing']);
      expect(await found('0%_s')).toEqual([]);
      expect(await found('\\')).toEqual(['back\\slash']);
      expect(await found('k\\s')).toEqual(['back\\slash']);
    });

    it('pages with limit and cursor within the matches', async () => {
      const first = await api().get('/api/sessions').query({ q: 'AURORA', limit: 1 }).set(t.auth(user)).expect(200);
      expect(first.body.sessions.map((s: Session) => s.title)).toEqual(['AURORA x2 manual']);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await api().get('/api/sessions').query({ q: 'AURORA', limit: 1, cursor: first.body.next_cursor }).set(t.auth(user)).expect(200);
      expect(second.body.sessions.map((s: Session) => s.title)).toEqual(['Aurora X1 router']);
      expect(second.body.next_cursor).toBeNull();
    });

    it('sees a rename at once (searches are not served from a cache)', async () => {
      await sessions(user, { q: 'router' });
      await api().patch(`/api/sessions/${ids['Aurora X1 router']}`).set(t.auth(user)).send({ title: 'Aurora X1 modem' }).expect(200);
      expect(await found('router')).toEqual([]);
      expect((await sessions(user, { q: 'modem' }, other)).map((s) => s.title)).toEqual(['Aurora X1 modem']);
      await api().patch(`/api/sessions/${ids['Aurora X1 router']}`).set(t.auth(user)).send({ title: 'Aurora X1 router' }).expect(200);
    });

    it.each([
      ['over 200 characters', 'q'.repeat(201)],
      ['a NUL', 'a\u0000'],
    ])('refuses q with %s (400)', async (_what, q) => {
      const res = await api().get('/api/sessions').query({ q }).set(t.auth(user)).expect(400);
      expect(res.body.message).toMatch(/\bq\b/);
    });

    it('searches an encoded lone surrogate as the U+FFFD the query parser makes of it: no match, no error', async () => {
      const res = await api().get('/api/sessions?q=%ED%A0%80').set(t.auth(user)).expect(200);
      expect(res.body.sessions).toEqual([]);
    });

    it('refuses a repeated q (400)', async () => {
      await api().get('/api/sessions?q=a&q=b').set(t.auth(user)).expect(400);
    });
  });

  describe('PUT/DELETE /api/sessions/:sid/messages/:mid/feedback', () => {
    it('stores, replaces and clears feedback, returned with the message and visible on another instance despite a stale cache', async () => {
      const user = uniqueUser('feedback');
      const session = randomUUID();
      await turn(user, session, 'question', 'answer');
      const [, answer] = (await messages(user, session, {}, other)).messages; // cached
      const path = `/api/sessions/${session}/messages/${answer.id}/feedback`;

      let res: request.Response | undefined;
      await restoreStaleCopy(messagesCacheKey(user, session), async () => {
        res = await api().put(path).set(t.auth(user)).send({ rating: 'up', comment: '清楚 ✓ مفيد' }).expect(200);
      });
      expect(res!.body).toEqual({
        ...answer,
        rag_trace: null,
        feedback: { rating: 'up', comment: '清楚 ✓ مفيد', updated_at: expect.any(String) },
      });
      const seen = (await messages(user, session, {}, other)).messages;
      expect(seen[1].feedback).toEqual(res!.body.feedback);
      expect(seen[0].feedback).toBeNull();
      // The paged read sees it too.
      expect((await messages(user, session, { limit: 1 }, other)).messages[0].feedback?.rating).toBe('up');

      // Replaced; the id in upper case names the same message.
      await restoreStaleCopy(messagesCacheKey(user, session), () =>
        api().put(path.replace(answer.id, answer.id.toUpperCase())).set(t.auth(user)).send({ rating: 'down' }).expect(200),
      );
      expect((await messages(user, session, {}, other)).messages[1].feedback).toMatchObject({ rating: 'down', comment: null });

      // Cleared: 200 with the message, and again (idempotent).
      await restoreStaleCopy(messagesCacheKey(user, session), async () => {
        res = await api().delete(path).set(t.auth(user)).expect(200);
      });
      expect(res!.body).toMatchObject({ id: answer.id, feedback: null });
      expect((await messages(user, session, {}, other)).messages[1].feedback).toBeNull();
      await api().delete(path).set(t.auth(user)).expect(200);
      // Feedback does not reorder the session list.
      expect((await sessions(user))[0].updated_at).toBe((await sessions(user, {}, other))[0].updated_at);
    });

    it("takes feedback on answers only: a question (the user's own message) is a 400 naming it, and nothing is stored", async () => {
      const user = uniqueUser('fb-question');
      const session = randomUUID();
      await turn(user, session, 'my question', 'the answer');
      const [question, answer] = (await messages(user, session)).messages;
      expect([question.type, answer.type]).toEqual(['human', 'ai']);
      for (const body of [{ rating: 'up' }, { rating: 'down', comment: 'rating my own words' }]) {
        const res = await api().put(`/api/sessions/${session}/messages/${question.id}/feedback`).set(t.auth(user)).send(body);
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'invalid_request' });
        expect(res.body.message).toBe(`Feedback is taken on answers only: message ${question.id} is the user's own message (type human)`);
      }
      const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM chat_messages WHERE session_id = $1 AND feedback_rating IS NOT NULL`, [session]);
      expect(count).toBe(0);
      expect((await messages(user, session, {}, other)).messages.map((m) => m.feedback)).toEqual([null, null]);
      // Clearing stays idempotent: a question has no feedback to clear.
      await api().delete(`/api/sessions/${session}/messages/${question.id}/feedback`).set(t.auth(user)).expect(200);
      // The answer still takes it.
      await api().put(`/api/sessions/${session}/messages/${answer.id}/feedback`).set(t.auth(user)).send({ rating: 'up' }).expect(200);
    });

    it('answers 404 for forged ids and other users, 400 for bad ids and bodies', async () => {
      const owner = uniqueUser('fb-owner');
      const session = randomUUID();
      const elsewhere = randomUUID();
      await turn(owner, session, 'q', 'a');
      await turn(owner, elsewhere, 'other q', 'other a');
      const [, mine] = (await messages(owner, session)).messages;
      const [, notHere] = (await messages(owner, elsewhere)).messages;
      const put = (sid: string, mid: string, body: object, user = owner) => api().put(`/api/sessions/${sid}/messages/${mid}/feedback`).set(t.auth(user)).send(body);

      await put(session, randomUUID(), { rating: 'up' }).expect(404);
      await put(session, notHere.id, { rating: 'up' }).expect(404); // a message of another session of the same user
      await put(randomUUID(), mine.id, { rating: 'up' }).expect(404);
      await put(session, mine.id, { rating: 'up' }, uniqueUser('fb-intruder')).expect(404);
      await api()
        .delete(`/api/sessions/${session}/messages/${mine.id}/feedback`)
        .set(t.auth(uniqueUser('fb-intruder')))
        .expect(404);
      await api().delete(`/api/sessions/${session}/messages/${notHere.id}/feedback`).set(t.auth(owner)).expect(404);

      await put(session, 'not-a-uuid', { rating: 'up' }).expect(400);
      await put('1', mine.id, { rating: 'up' }).expect(400);
      await put(session, '12', { rating: 'up' }).expect(400); // the internal numeric id is not an id on the wire
      for (const body of [
        {},
        { rating: 'meh' },
        { rating: 'UP' },
        { rating: 'up', comment: 'c'.repeat(2001) },
        { rating: 'up', comment: 'nul\u0000' },
        { rating: 'up', comment: '\udfff' },
        { rating: 'up', comment: 7 },
        { rating: 'up', extra: true },
      ]) {
        const res = await put(session, mine.id, body).expect(400);
        expect(res.body.message).toMatch(/rating|comment|extra/);
      }
      await put(session, mine.id, { rating: 'down', comment: 'c'.repeat(2000) }).expect(200);
      await put(session, mine.id, { rating: 'up', comment: null }).expect(200);

      const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM chat_messages WHERE session_id = $1 AND feedback_rating IS NOT NULL`, [elsewhere]);
      expect(count).toBe(0);
    });
  });

  it('documents the new routes and fields in OpenAPI', async () => {
    const doc = (await api().get('/docs-json').expect(200)).body;
    expect(doc.paths['/api/sessions/{session_id}'].patch).toBeDefined();
    expect(doc.paths['/api/sessions/{session_id}/messages/{message_id}/feedback'].put).toBeDefined();
    expect(doc.paths['/api/sessions/{session_id}/messages/{message_id}/feedback'].delete).toBeDefined();
    expect(Object.keys(doc.components.schemas.MessageInfo.properties)).toEqual(expect.arrayContaining(['id', 'seq', 'status', 'run_id', 'feedback']));
    expect(Object.keys(doc.components.schemas.SessionInfo.properties)).toEqual(expect.arrayContaining(['created_at', 'active_run']));
    const listParams = doc.paths['/api/sessions'].get.parameters.map((p: { name: string }) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(['q', 'limit', 'cursor']));
  });
});
