import { createHash, randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import request from 'supertest';
import { ApiKeyService } from '../src/auth/api-keys/api-key.service.js';
import { adminAuth } from './support/admin.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { TEST_REDIS_URL, testDatabaseUrl } from './support/test-env.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

describe('API keys', () => {
  let a: TestApp;
  let b: TestApp;
  const env = { KNOWLEDGE_SEED_ON_START: 'false', RATE_LIMIT_CHAT_PER_MINUTE: '0' };

  beforeAll(async () => {
    a = await createTestApp(env);
    b = await createTestApp(env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const server = (t: TestApp = a) => t.app.getHttpServer();
  async function createKey(t: TestApp, auth: { Authorization: string }, body: Record<string, unknown> = { name: 'ci job' }) {
    const res = await request(server(t)).post('/api/keys').set(auth).send(body).expect(201);
    return res.body as { id: string; key: string; prefix: string; name: string; role: string; expires_at: string | null };
  }

  it('creates a key shown once, which then acts as its owner on chat and session routes', async () => {
    const owner = uniqueUser('svc');
    const created = await createKey(a, a.auth(owner), { name: '  nightly report  ' });
    expect(created).toMatchObject({ name: 'nightly report', role: 'user', expires_at: null, last_used_at: null, revoked_at: null });
    expect(created.key).toMatch(/^rk-[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(3, 11));

    const turn = await request(server()).post('/api/chat').set(bearer(created.key)).send({ message: 'hello' }).expect(200);
    // The session is the owner's: the owner's signed token sees it, another user does not.
    await request(server()).get(`/api/sessions/${turn.body.session_id}/messages`).set(a.auth(owner)).expect(200);
    await request(server())
      .get(`/api/sessions/${turn.body.session_id}/messages`)
      .set(a.auth(uniqueUser('other')))
      .expect(404);
    const listed = await request(server(b)).get('/api/sessions').set(bearer(created.key)).expect(200);
    expect(listed.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([turn.body.session_id]);
  });

  it("lists the caller's keys without the key, and records the last use at most once a minute", async () => {
    const owner = uniqueUser('lister');
    const first = await createKey(a, a.auth(owner), { name: 'first' });
    const second = await createKey(a, a.auth(owner), { name: 'second', expires_in_days: 30 });
    await createKey(a, a.auth(uniqueUser('someone-else')));

    await request(server()).get('/api/sessions').set(bearer(first.key)).expect(200);
    await a.app.get(ApiKeyService).flushUsage();
    const res = await request(server()).get('/api/keys').set(a.auth(owner)).expect(200);
    expect(JSON.stringify(res.body)).not.toContain(first.key.slice(3));
    expect(JSON.stringify(res.body)).not.toContain(second.key.slice(3));
    expect(res.body.keys.map((k: { name: string }) => k.name)).toEqual(['second', 'first']);
    const [listedSecond, listedFirst] = res.body.keys;
    expect(Object.keys(listedFirst).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'role']);
    expect(listedFirst).toMatchObject({ id: first.id, prefix: first.prefix, revoked_at: null, expires_at: null });
    expect(Date.parse(listedFirst.last_used_at)).toBeGreaterThan(Date.parse(listedFirst.created_at) - 1000);
    expect(listedSecond.last_used_at).toBeNull();
    const days = (Date.parse(listedSecond.expires_at) - Date.parse(listedSecond.created_at)) / 86_400_000;
    expect(days).toBeCloseTo(30, 3);

    // Within the minute neither this instance nor another one writes last_used_at again.
    await request(server()).get('/api/sessions').set(bearer(first.key)).expect(200);
    await request(server(b)).get('/api/sessions').set(bearer(first.key)).expect(200);
    await Promise.all([a.app.get(ApiKeyService).flushUsage(), b.app.get(ApiKeyService).flushUsage()]);
    const [row] = await a.dataSource.query('SELECT last_used_at FROM api_keys WHERE id = $1', [first.id]);
    expect((row.last_used_at as Date).toISOString()).toBe(listedFirst.last_used_at);

    // A key may list its owner's keys.
    const byKey = await request(server()).get('/api/keys').set(bearer(first.key)).expect(200);
    expect(byKey.body.keys).toHaveLength(2);
  });

  it('stores only the SHA-256 of a key', async () => {
    const created = await createKey(a, a.auth(uniqueUser('hashed')));
    const rows: Array<{ row: string; key_hash: Buffer }> = await a.dataSource.query('SELECT row_to_json(k)::text AS row, key_hash FROM api_keys k');
    expect(rows.length).toBeGreaterThan(0);
    for (const { row } of rows) {
      expect(row).not.toContain(created.key);
      expect(row).not.toContain(created.key.slice(3));
      expect(row).not.toContain(created.key.slice(11));
    }
    const [mine] = await a.dataSource.query('SELECT key_hash FROM api_keys WHERE id = $1', [created.id]);
    expect(Buffer.from(mine.key_hash).equals(createHash('sha256').update(created.key).digest())).toBe(true);
  });

  it("revokes a key at once on every instance, idempotently; another user's key is a 404", async () => {
    const owner = uniqueUser('revoker');
    const created = await createKey(a, a.auth(owner));
    await request(server(b)).get('/api/sessions').set(bearer(created.key)).expect(200); // b has served the key before

    await request(server())
      .delete(`/api/keys/${created.id}`)
      .set(a.auth(uniqueUser('intruder')))
      .expect(404);
    const revoked = await request(server()).delete(`/api/keys/${created.id}`).set(a.auth(owner)).expect(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));

    const refusedOnB = await request(server(b)).get('/api/sessions').set(bearer(created.key)).expect(401);
    expect(refusedOnB.body.message).toBe('Invalid API key: unknown or revoked');
    await request(server()).get('/api/sessions').set(bearer(created.key)).expect(401);

    const again = await request(server(b)).delete(`/api/keys/${created.id.toUpperCase()}`).set(b.auth(owner)).expect(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    const listed = await request(server()).get('/api/keys').set(a.auth(owner)).expect(200);
    expect(listed.body.keys[0]).toMatchObject({ id: created.id, revoked_at: revoked.body.revoked_at });

    // An unknown key gets the same answer as a revoked one.
    const unknown = await request(server())
      .get('/api/sessions')
      .set(bearer(`rk-${'A'.repeat(43)}`))
      .expect(401);
    expect(unknown.body.message).toBe(refusedOnB.body.message);
  });

  it('lets a key revoke only itself: never another key of its owner, and never create one', async () => {
    const owner = uniqueUser('minter');
    const used = await createKey(a, a.auth(owner));
    const other = await createKey(a, a.auth(owner));
    const refused = await request(server()).post('/api/keys').set(bearer(used.key)).send({ name: 'successor' }).expect(403);
    expect(refused.body.message).toMatch(/API key cannot create API keys/);
    // A leaked key cannot lock its owner's other clients out.
    const notItself = await request(server()).delete(`/api/keys/${other.id}`).set(bearer(used.key)).expect(403);
    expect(notItself.body.message).toMatch(/only itself/);
    await request(server()).get('/api/sessions').set(bearer(other.key)).expect(200);
    await request(server()).delete(`/api/keys/${used.id}`).set(bearer(used.key)).expect(200);
    await request(server()).get('/api/sessions').set(bearer(used.key)).expect(401);
    const [{ count }] = await a.dataSource.query('SELECT count(*)::int AS count FROM api_keys WHERE user_id = $1', [owner]);
    expect(count).toBe(2);
  });

  it('refuses an expired key', async () => {
    const created = await createKey(a, a.auth(uniqueUser('expiring')), { name: 'short-lived', expires_in_days: 1 });
    await request(server()).get('/api/sessions').set(bearer(created.key)).expect(200);
    await a.dataSource.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.id]);
    const res = await request(server(b)).get('/api/sessions').set(bearer(created.key)).expect(401);
    expect(res.body.message).toMatch(/API key expired/);
  });

  it('carries the role of the token that created the key', async () => {
    const adminKey = await createKey(a, adminAuth(a));
    const userKey = await createKey(a, a.auth(uniqueUser('plain')));
    expect(adminKey.role).toBe('admin');
    expect(userKey.role).toBe('user');
    // An admin route: past the role check, the document is simply absent.
    await request(server()).delete(`/api/knowledge/documents/${randomUUID()}`).set(bearer(adminKey.key)).expect(404);
    const refused = await request(server()).delete(`/api/knowledge/documents/${randomUUID()}`).set(bearer(userKey.key)).expect(403);
    expect(refused.body.message).toMatch(/Only administrators/);
  });

  it('answers hostile input with a 4xx', async () => {
    const owner = uniqueUser('hostile');
    const auth = a.auth(owner);
    await request(server()).delete('/api/keys/not-a-uuid').set(auth).expect(400);
    await request(server()).delete("/api/keys/1' OR '1'='1").set(auth).expect(400);
    await request(server()).delete(`/api/keys/${randomUUID()}`).set(auth).expect(404);
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'nul\u0000name' },
      { name: 'lone \ud800 surrogate' },
      { name: 'line\nbreak' },
      { name: 'x'.repeat(101) },
      { name: 42 },
      { name: ['a'] },
      { name: 'ok', expires_in_days: 0 },
      { name: 'ok', expires_in_days: 1.5 },
      { name: 'ok', expires_in_days: '7' },
      { name: 'ok', expires_in_days: 1e9 },
      { name: 'ok', role: 'admin' },
    ]) {
      const res = await request(server()).post('/api/keys').set(auth).send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    const huge = await request(server())
      .post('/api/keys')
      .set(auth)
      .send({ name: 'x'.repeat(1024 * 1024) });
    expect([400, 413]).toContain(huge.status);
    await createKey(a, auth, { name: 'x'.repeat(100) });
    await createKey(a, auth, { name: '密钥🔑'.repeat(25) }); // 100 code points

    for (const key of ['rk-', 'rk-short', `rk-${'A'.repeat(44)}`, `rk-${'A'.repeat(42)}=`, `rk-${'A'.repeat(42)}.`]) {
      const res = await request(server()).get('/api/sessions').set(bearer(key)).expect(401);
      expect(res.body.message).toMatch(/Malformed API key/);
    }
  });

  it('keeps at most 50 live keys per user', async () => {
    const owner = uniqueUser('hoarder');
    const auth = a.auth(owner);
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => createKey(i % 2 ? a : b, auth, { name: `key ${i}` })));
    const refused = await request(server()).post('/api/keys').set(auth).send({ name: 'one too many' }).expect(409);
    expect(refused.body.message).toMatch(/At most 50 live API keys/);
    await request(server()).delete(`/api/keys/${created[0].id}`).set(auth).expect(200);
    await createKey(a, auth, { name: 'replacement' });
    const [{ live }] = await a.dataSource.query('SELECT count(*)::int AS live FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL', [owner]);
    expect(live).toBe(50);
  });
});

describe('API keys: rate limits per key and per user', () => {
  let t: TestApp;
  const redis = createClient({ url: TEST_REDIS_URL });
  beforeAll(async () => {
    t = await createTestApp({ KNOWLEDGE_SEED_ON_START: 'false', RATE_LIMIT_CHAT_PER_MINUTE: '2' });
    await redis.connect();
  });
  afterAll(async () => {
    await redis.quit();
    await t?.close();
  });

  const chat = (key: string) => request(t.app.getHttpServer()).post('/api/chat').set(bearer(key)).send({ message: 'hello' });
  const newKey = async (owner: string) =>
    (await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(owner)).send({ name: 'limited' }).expect(201)).body as {
      id: string;
      key: string;
    };

  it("spends the key's own budget: 429 with Retry-After once the key is past it", async () => {
    const { id, key } = await newKey(uniqueUser('one-key'));
    await chat(key).expect(200);
    expect(await redis.get(`rate_limit_api_key:chat:${id}`)).toBe('1');
    await chat(key).expect(200);
    const refused = await chat(key).expect(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.message).toMatch(/Too many chat turns for this API key/);
  });

  it("still spends the user's budget, so many keys do not multiply it", async () => {
    const owner = uniqueUser('two-keys');
    const first = await newKey(owner);
    const second = await newKey(owner);
    await chat(first.key).expect(200);
    await chat(second.key).expect(200);
    const refused = await chat(first.key).expect(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.message).toMatch(/Too many chat turns for this user/);
    await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(owner)).send({ message: 'hello' }).expect(429);
  });
});

describe('API keys: PostgreSQL unreachable', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  beforeAll(async () => {
    const url = new URL(testDatabaseUrl());
    proxy = await new TcpProxy(url.hostname, Number(url.port || 5432)).start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    t = await createTestApp({ KNOWLEDGE_SEED_ON_START: 'false', DATABASE_URL: url.toString() });
  });
  afterAll(async () => {
    proxy?.setMode('forward');
    await t?.close();
    await proxy?.stop();
  });

  it('answers 503 storage_unavailable for a key while signed tokens keep working', async () => {
    const owner = uniqueUser('outage');
    const { key } = (await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(owner)).send({ name: 'outage' }).expect(201)).body;
    proxy.setMode('refuse');
    const res = await request(t.app.getHttpServer()).get('/api/keys').set(bearer(key)).expect(503);
    expect(res.body).toMatchObject({ code: 'storage_unavailable', message: expect.stringMatching(/API key could not be checked/) });
    // The signed token is accepted without the database: the request gets as far as validating its body.
    const signed = await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(owner)).send({ name: '' }).expect(400);
    expect(signed.body.message).toMatch(/name should not be empty/);
    proxy.setMode('forward');
    await request(t.app.getHttpServer()).get('/api/keys').set(bearer(key)).expect(200);
  });
});
