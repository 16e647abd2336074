import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createClient } from '@keyv/redis';
import { messagesCacheKey, sessionsCacheKey } from '../src/session/session-cache-keys.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_REDIS_URL } from './support/test-env.js';

describe('Sessions (PostgreSQL + Redis)', () => {
  let t: TestApp;
  const redis = createClient({ url: TEST_REDIS_URL });

  beforeAll(async () => {
    t = await createTestApp();
    await redis.connect();
  });
  afterAll(async () => {
    await redis.quit();
    await t.close();
  });

  const server = () => t.app.getHttpServer();

  async function turn(user: string, session: string, question: string, answer: string, trace?: unknown) {
    return t.storage.appendTurn(user, session, [
      { type: 'human', content: question },
      { type: 'ai', content: answer, rag_trace: trace },
    ]);
  }

  it("lists only the caller's sessions, newest first, with titles and counts", async () => {
    const alice = uniqueUser('alice');
    const bob = uniqueUser('bob');
    const first = randomUUID();
    const second = randomUUID();
    await turn(alice, first, '第一个问题：退货政策是什么？', '三十天内可退。');
    await turn(alice, second, 'What is the warranty?', 'Two years.');
    await turn(bob, randomUUID(), 'bob only', 'hidden from alice');
    await turn(alice, first, 'follow-up', 'answer'); // first is now the newest

    const res = await request(server()).get('/api/sessions').set(t.auth(alice)).expect(200);
    expect(res.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([first, second]);
    expect(res.body.sessions[0]).toMatchObject({
      title: '第一个问题：退货政策是什么？',
      message_count: 4,
      pending_hitl: null,
    });
    expect(res.body.sessions[1]).toMatchObject({ title: 'What is the warranty?', message_count: 2 });
    expect(new Date(res.body.sessions[0].updated_at).getTime()).toBeGreaterThanOrEqual(new Date(res.body.sessions[1].updated_at).getTime());
    expect(res.body.next_cursor).toBeNull();
  });

  it('pages with limit and cursor without gaps or repeats, from cache and from the database alike', async () => {
    const user = uniqueUser('pager');
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      const id = randomUUID();
      ids.unshift(id); // newest first
      await turn(user, id, `question ${i}`, `answer ${i}`);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string | number> = { limit: 3 };
      if (cursor) query.cursor = cursor;
      const res = await request(server()).get('/api/sessions').query(query).set(t.auth(user)).expect(200);
      seen.push(...res.body.sessions.map((s: { session_id: string }) => s.session_id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it('returns a transcript in order with traces, and 404 for a missing or foreign session', async () => {
    const owner = uniqueUser('owner');
    const session = randomUUID();
    await turn(owner, session, 'Q1', 'A1', { tool_used: true, query: 'Q1', final_chunks: [{ source: 'a.md', text: 'x' }] });
    await turn(owner, session, 'Q2', 'A2');

    const res = await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(owner)).expect(200);
    expect(res.body.session_id).toBe(session);
    expect(res.body.messages.map((m: { type: string; content: string }) => `${m.type}:${m.content}`)).toEqual(['human:Q1', 'ai:A1', 'human:Q2', 'ai:A2']);
    expect(res.body.messages[1].rag_trace).toMatchObject({ tool_used: true, final_chunks: [{ source: 'a.md' }] });
    expect(res.body.messages[0].rag_trace).toBeNull();
    expect(Date.parse(res.body.messages[0].timestamp)).not.toBeNaN();

    const foreign = await request(server())
      .get(`/api/sessions/${session}/messages`)
      .set(t.auth(uniqueUser('intruder')))
      .expect(404);
    const missing = await request(server()).get(`/api/sessions/${randomUUID()}/messages`).set(t.auth(owner)).expect(404);
    expect(foreign.body.error).toBe(missing.body.error);
    expect(foreign.body.message).toMatch(/not found/);
  });

  it('deletes a session: messages cascade in SQL, both cache keys go, a second delete is 404', async () => {
    const user = uniqueUser('deleter');
    const session = randomUUID();
    await turn(user, session, 'Q', 'A');
    await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    await request(server()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(await redis.exists(messagesCacheKey(user, session))).toBe(1);
    expect(await redis.exists(sessionsCacheKey(user))).toBe(1);

    // Another user cannot delete it, and trying changes nothing.
    await request(server())
      .delete(`/api/sessions/${session}`)
      .set(t.auth(uniqueUser('other')))
      .expect(404);

    const res = await request(server()).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
    expect(res.body).toEqual({ session_id: session, message: 'Session deleted' });

    const [{ count }] = await t.dataSource.query('SELECT count(*)::int AS count FROM chat_messages WHERE session_id = $1', [session]);
    expect(count).toBe(0);
    expect(await redis.exists(messagesCacheKey(user, session))).toBe(0);
    expect(await redis.exists(sessionsCacheKey(user))).toBe(0);
    await request(server()).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(404);
    await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(404);
  });

  it('the foreign key itself cascades (checked with plain SQL)', async () => {
    const user = uniqueUser('sql');
    const session = randomUUID();
    await turn(user, session, 'Q', 'A');
    await t.dataSource.query('DELETE FROM chat_sessions WHERE id = $1', [session]);
    const [{ count }] = await t.dataSource.query('SELECT count(*)::int AS count FROM chat_messages WHERE session_id = $1', [session]);
    expect(count).toBe(0);
    const [{ confdeltype }] = await t.dataSource.query(`SELECT confdeltype FROM pg_constraint WHERE conrelid = 'chat_messages'::regclass AND contype = 'f'`);
    expect(confdeltype).toBe('c');
  });

  it('serves repeated reads from the cache and drops the cache on every write', async () => {
    const user = uniqueUser('cache');
    const session = randomUUID();
    await turn(user, session, 'Q1', 'A1');
    await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    await request(server()).get('/api/sessions').set(t.auth(user)).expect(200);

    // Change the rows behind the cache's back: a cache hit still shows the old values.
    await t.dataSource.query(`UPDATE chat_messages SET content = 'changed in SQL' WHERE session_id = $1`, [session]);
    await t.dataSource.query(`UPDATE chat_sessions SET title = 'changed in SQL' WHERE id = $1`, [session]);
    const hit = await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(hit.body.messages[0].content).toBe('Q1');
    const listHit = await request(server()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(listHit.body.sessions[0].title).toBe('Q1');

    // A new turn invalidates both keys: the next reads come from PostgreSQL.
    await turn(user, session, 'Q2', 'A2');
    expect(await redis.exists(messagesCacheKey(user, session))).toBe(0);
    const fresh = await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(fresh.body.messages.map((m: { content: string }) => m.content)).toEqual(['changed in SQL', 'changed in SQL', 'Q2', 'A2']);
    const list = await request(server()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(list.body.sessions[0]).toMatchObject({ title: 'changed in SQL', message_count: 4 });

    // A rename refreshes the list the same way.
    await request(server()).patch(`/api/sessions/${session}`).set(t.auth(user)).send({ title: 'renamed' }).expect(200);
    const renamed = await request(server()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(renamed.body.sessions[0]).toMatchObject({ title: 'renamed', message_count: 4 });
  });

  it('keeps the cache keys as the protocol names them', async () => {
    const user = uniqueUser('keys');
    const session = randomUUID();
    await turn(user, session, 'Q', 'A');
    await t.storage.getSessionMessages(user, session);
    await t.storage.listSessionInfos(user);
    // The user's hash tag, `{u<base64url of the id>}`: on a Redis Cluster a user's entries share a slot.
    const tag = `{u${Buffer.from(user).toString('base64url')}}`;
    const keys = await redis.keys(`*${tag}*`);
    expect(keys.sort()).toEqual([`chat_messages:${tag}:${session}`, `chat_sessions:${tag}`].sort());
    expect(await redis.ttl(`chat_sessions:${tag}`)).toBeGreaterThan(0);
  });
});
