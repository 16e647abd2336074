import { createHmac, randomUUID } from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { readSse } from './support/sse-client.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

/**
 * Inputs found by attacking the service: identities PostgreSQL cannot store
 * as sent, tokens that never expire, and requests that used to answer 500 or
 * hold a socket. Everything goes through the real app.
 */
describe('Edge validation: identities, token lifetime, hostile bodies and headers, slow clients', () => {
  const MAX_LIFETIME = 3600; // configured below, so the test proves the variable is read
  const REQUEST_TIMEOUT_MS = 1000;
  const weather = new FakeWeatherServer();
  let t: TestApp;
  let base: string;
  const server = () => t.app.getHttpServer();
  const now = () => Math.floor(Date.now() / 1000);
  /** A bearer header carrying exactly `claims` (nothing added, nothing checked), HS256-signed with the test secret. */
  const bearer = (claims: Record<string, unknown>) => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
    const signature = createHmac('sha256', TEST_JWT_SECRET).update(unsigned).digest('base64url');
    return { Authorization: `Bearer ${unsigned}.${signature}` };
  };
  /** A token for `sub` valid for ten minutes. */
  const as = (sub: string) => bearer({ sub, iat: now(), exp: now() + 600 });

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({
      JWT_MAX_LIFETIME_SECONDS: String(MAX_LIFETIME),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      WEATHER_BASE_URL: weather.url,
      WEATHER_GEOCODING_URL: weather.url,
    });
    base = await t.listen();
  });
  afterAll(async () => {
    await t.close();
    await weather.stop();
  });

  describe('user ids (JWT sub) must be storable exactly as sent', () => {
    it('a lone surrogate in sub is refused, so look-alike ids cannot share sessions', async () => {
      const stem = uniqueUser('victim');
      const victim = `${stem}\ud800`;
      const twin = `${stem}\udbff`;
      const literal = `${stem}\ufffd`; // what PostgreSQL would have stored for both

      const created = await request(server()).post('/api/chat').set(as(victim)).send({ message: 'my secret plan' });
      expect(created.status).toBe(401);
      expect(created.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(created.body.message).toMatch(/"sub"/);
      expect(created.body.message).toMatch(/surrogate/);

      // The literal U+FFFD id is a valid, different user: it gets its own session...
      const own = await request(server()).post('/api/chat').set(as(literal)).send({ message: 'hello there' }).expect(200);
      const session = own.body.session_id;
      // ...which no lone-surrogate token can list, read, post into or delete.
      for (const sub of [victim, twin, `${stem}\udc00`]) {
        await request(server()).get('/api/sessions').set(as(sub)).expect(401);
        await request(server()).get(`/api/sessions/${session}/messages`).set(as(sub)).expect(401);
        await request(server()).post('/api/chat').set(as(sub)).send({ message: 'hi', session_id: session }).expect(401);
        await request(server()).delete(`/api/sessions/${session}`).set(as(sub)).expect(401);
      }
      const kept = await request(server()).get(`/api/sessions/${session}/messages`).set(as(literal)).expect(200);
      expect(kept.body.messages).toHaveLength(2);
      const listed = await request(server()).get('/api/sessions').set(as(literal)).expect(200);
      expect(listed.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([session]);
    });

    it.each([
      ['a NUL character', (s: string) => `${s}\u0000`, /NUL/],
      ['a control character', (s: string) => `${s}\u0007`, /control/],
      ['a line feed', (s: string) => `${s}\nadmin`, /control/],
      ['only white space', () => '   ', /visible/],
      ['only zero-width characters', () => '\u200b\u200d\ufeff', /visible/],
      ['129 characters', () => 'u'.repeat(129), /128/],
      ['a non-string', () => 42, /"sub"/],
    ])('sub with %s answers 401 naming "sub" on every route', async (_name, make, reason) => {
      const sub = make(uniqueUser('bad'));
      const auth = as(sub as string);
      const session = randomUUID();
      const responses = [
        await request(server()).post('/api/chat').set(auth).send({ message: 'hello' }),
        await request(server()).get('/api/sessions').set(auth),
        await request(server()).get(`/api/sessions/${session}/messages`).set(auth),
        await request(server()).delete(`/api/sessions/${session}`).set(auth),
        await request(server()).post('/api/knowledge/search').set(auth).send({ query: 'warranty' }),
      ];
      for (const res of responses) {
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
        expect(res.body.message).toMatch(/"sub"/);
        expect(res.body.message).toMatch(reason);
      }
    });

    it('accepts any visible, well-formed id up to 128 characters and compares it exactly (no normalization)', async () => {
      const suffix = `${process.pid}-${Date.now().toString(36)}`;
      const nfc = `jos\u00e9-${suffix}`;
      const nfd = `jose\u0301-${suffix}`;
      const created = await request(server()).post('/api/chat').set(as(nfc)).send({ message: 'hola' }).expect(200);
      const session = created.body.session_id;
      await request(server()).get(`/api/sessions/${session}/messages`).set(as(nfd)).expect(404);
      expect((await request(server()).get('/api/sessions').set(as(nfd)).expect(200)).body.sessions).toEqual([]);
      const [row] = await t.dataSource.query('SELECT user_id FROM chat_sessions WHERE id = $1', [session]);
      expect(row.user_id).toBe(nfc);

      for (const sub of [`用户-${suffix}`, `👩‍💻 dev ${suffix}`, `${'a'.repeat(128 - suffix.length)}${suffix}`]) {
        await request(server()).get('/api/sessions').set(as(sub)).expect(200);
      }
    });
  });

  describe('tokens must expire, within the configured lifetime', () => {
    const sessions = (auth: { Authorization: string }) => request(server()).get('/api/sessions').set(auth);

    it('a token without exp is refused', async () => {
      const res = await sessions(bearer({ sub: uniqueUser(), iat: now() })).expect(401);
      expect(res.body.message).toBe('Token must carry an expiry (exp)');
      await sessions(bearer({ sub: uniqueUser() })).expect(401);
    });

    it('a lifetime over JWT_MAX_LIFETIME_SECONDS is refused; exactly the maximum is accepted', async () => {
      const iat = now();
      const tooLong = await sessions(bearer({ sub: uniqueUser(), iat, exp: iat + MAX_LIFETIME + 1 })).expect(401);
      expect(tooLong.body.message).toMatch(new RegExp(`lifetime.*maximum of ${MAX_LIFETIME} seconds`));
      await sessions(bearer({ sub: uniqueUser(), iat, exp: iat + MAX_LIFETIME })).expect(200);
    });

    it('without iat the lifetime runs from now', async () => {
      const res = await sessions(bearer({ sub: uniqueUser(), exp: now() + MAX_LIFETIME + 120 })).expect(401);
      expect(res.body.message).toMatch(/lifetime/);
      await sessions(bearer({ sub: uniqueUser(), exp: now() + 60 })).expect(200);
    });

    it('an iat in the future does not stretch the lifetime', async () => {
      const iat = now() + 10 * 365 * 86400;
      const res = await sessions(bearer({ sub: uniqueUser(), iat, exp: iat + 60 })).expect(401);
      expect(res.body.message).toMatch(/lifetime/);
    });

    it('a token issued in the future (iat beyond a minute of clock skew) is refused; within the skew it is accepted', async () => {
      for (const ahead of [365 * 86400, 3600, 61 + 5]) {
        const res = await sessions(bearer({ sub: uniqueUser(), iat: now() + ahead, exp: now() + 600 })).expect(401);
        expect(res.body).toMatchObject({
          code: 'unauthorized',
          message: 'Invalid token: it was issued in the future ("iat" is more than 60 seconds ahead of this server\'s clock)',
        });
      }
      await sessions(bearer({ sub: uniqueUser(), iat: now() + 30, exp: now() + 600 })).expect(200);
      await sessions(bearer({ sub: uniqueUser(), iat: now() - 30, exp: now() + 600 })).expect(200);
    });

    it('a non-numeric iat is refused', async () => {
      const res = await sessions(bearer({ sub: uniqueUser(), iat: 'yesterday', exp: now() + 60 })).expect(401);
      expect(res.body.message).toMatch(/"iat"/);
    });
  });

  describe('inputs that used to answer 500', () => {
    it('a session cursor whose timestamp PostgreSQL cannot represent is a 400 naming the cursor', async () => {
      const auth = t.auth(uniqueUser());
      for (const micros of ['9999999999999999999', '9000000000000000000', '99999999999999999']) {
        const cursor = Buffer.from(`${micros}.${randomUUID()}`).toString('base64url');
        const res = await request(server()).get(`/api/sessions?cursor=${cursor}`).set(auth);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(/cursor is invalid/);
      }
      const fine = Buffer.from(`9999999999999999.${randomUUID()}`).toString('base64url');
      await request(server()).get(`/api/sessions?cursor=${fine}`).set(auth).expect(200);
    });

    it.each(['/api/chat', '/api/knowledge/search'])('a body nested 2000 levels deep is a 400 on %s', async (route) => {
      const deepArray = `{"message":"hi","query":"hi","x":${'['.repeat(2000)}${']'.repeat(2000)}}`;
      const deepObject = `{"message":"hi","query":"hi","x":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`;
      for (const body of [deepArray, deepObject]) {
        const res = await request(server()).post(route).set(t.auth(uniqueUser())).set('Content-Type', 'application/json').send(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(res.body.message).toMatch(/nested deeper than 32 levels/);
        expect(res.body.message).toMatch(/\bx\b/);
        expect(res.body.request_id).toEqual(res.headers['x-request-id']);
      }
    });

    it.each([
      ['/api/chat', '{"message":"hi","__proto__":{"isAdmin":true}}', '__proto__'],
      ['/api/chat', '{"message":"hi","constructor":{"prototype":{"x":1}}}', 'constructor'],
      ['/api/chat', '{"message":"hi","prototype":1}', 'prototype'],
      ['/api/knowledge/search', '{"query":"warranty","__proto__":{"top_k":50}}', '__proto__'],
      ['/api/knowledge/search', '{"query":"warranty","constructor":1}', 'constructor'],
    ])('%s refuses the key in %s', async (route, body, key) => {
      const res = await request(server()).post(route).set(t.auth(uniqueUser())).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`property ${key} should not exist`));
    });

    it('refuses __proto__ nested anywhere in the body, naming where', async () => {
      const res = await request(server())
        .post('/api/chat')
        .set(t.auth(uniqueUser()))
        .set('Content-Type', 'application/json')
        .send('{"message":"hi","meta":[{"ok":1},{"__proto__":{"polluted":true}}]}');
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/property __proto__ should not exist/);
      expect(res.body.message).toMatch(/meta\[1\]/);
    });

    it('refuses __proto__ and constructor in the query string', async () => {
      const auth = t.auth(uniqueUser());
      for (const key of ['__proto__', 'constructor']) {
        const res = await request(server()).get(`/api/sessions?${key}=1`).set(auth);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(new RegExp(`property ${key} should not exist`));
      }
    });
  });

  describe('text PostgreSQL cannot store, or that shows nothing, is a 400 naming the field', () => {
    it.each([
      ['white space only', '   \t\n  ', /message must contain visible text/],
      ['zero-width characters only', '\u200b\u200c\u200d\ufeff', /message must contain visible text/],
      ['a NUL character', 'hello\u0000world', /message contains a NUL character/],
      ['a lone surrogate', 'a\ud800b', /message contains an unpaired UTF-16 surrogate/],
    ])('a chat message with %s', async (_name, message, reason) => {
      const user = uniqueUser();
      for (const route of ['/api/chat', '/api/chat/stream']) {
        const res = await request(server()).post(route).set(t.auth(user)).send({ message });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(reason);
      }
      expect((await request(server()).get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions).toEqual([]);
    });

    it.each([
      ['white space only', '  \u3000 ', /query must contain visible text/],
      ['zero-width characters only', '\u200b', /query must contain visible text/],
      ['a NUL character', 'warranty\u0000', /query contains a NUL character/],
      ['a lone surrogate', '\udfffwarranty', /query contains an unpaired UTF-16 surrogate/],
    ])('a knowledge search query with %s', async (_name, query, reason) => {
      const res = await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(reason);
    });

    it('a cursor with a NUL character, or with an encoded surrogate (not UTF-8)', async () => {
      const auth = t.auth(uniqueUser());
      for (const [cursor, reason] of [
        ['%00', /cursor contains a NUL character/],
        ['%ED%A0%80', /cursor/], // decoded to U+FFFD by the query parser: refused as a cursor never issued
      ] as const) {
        const res = await request(server()).get(`/api/sessions?cursor=${cursor}`).set(auth);
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(reason);
      }
    });

    it('ordinary text, including Chinese and emoji, still goes through', async () => {
      await request(server()).post('/api/chat').set(t.auth(uniqueUser())).send({ message: '退货政策是什么？ 👍' }).expect(200);
      await request(server()).post('/api/knowledge/search').set(t.auth(uniqueUser())).send({ query: '  warranty\t' }).expect(200);
    });
  });

  describe('Last-Event-ID on rejoin', () => {
    let user: string;
    let runId: string;
    let total: number;

    beforeAll(async () => {
      user = uniqueUser('rejoin');
      const first = await readSse(`${base}/api/chat/stream`, {
        method: 'POST',
        headers: { ...t.auth(user), 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'How long is the Aurora X2 warranty?' }),
      });
      expect(first.events.at(-1)!.event).toBe('done');
      runId = first.events[0].data.run_id;
      total = first.events.length;
    });

    it.each(['abc', '-1', '1.5', '1234567890', '1e3', '0x10', '+3', '3 4', ' , 2'])('%p is a 400 before any stream opens', async (value) => {
      const res = await request(server()).get(`/api/chat/runs/${runId}/stream`).set(t.auth(user)).set('Last-Event-ID', value);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body.message).toMatch(/^Last-Event-ID must be /);
    });

    it('absent or empty replays from the start; a valid id replays what follows it', async () => {
      const absent = await readSse(`${base}/api/chat/runs/${runId}/stream`, { headers: t.auth(user) });
      expect(absent.events.map((e) => e.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      const empty = await readSse(`${base}/api/chat/runs/${runId}/stream`, { headers: { ...t.auth(user), 'Last-Event-ID': '' } });
      expect(empty.events[0].id).toBe(1);
      const after = await readSse(`${base}/api/chat/runs/${runId}/stream`, { headers: { ...t.auth(user), 'Last-Event-ID': '2' } });
      expect(after.events[0].id).toBe(3);
      expect(after.events).toHaveLength(total - 2);
    });
  });

  describe('slow clients', () => {
    const sockets: net.Socket[] = [];
    afterEach(() => sockets.splice(0).forEach((socket) => socket.destroy())); // a failed test must not keep the app from closing

    /** Sends `head` (and nothing more) on a raw socket; resolves with what the server wrote once it closes the socket. */
    const sendPartial = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(base);
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
        sockets.push(socket);
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
        socket.on('error', reject);
        socket.on('close', () => resolve(answer));
      });

    // Node answers 408 and closes the socket (the app has written nothing yet): the answer is there when the socket closes.
    it('an incomplete body is answered 408 after HTTP_REQUEST_TIMEOUT_MS, not held for minutes', async () => {
      const auth = t.auth(uniqueUser());
      const answer = await sendPartial(
        'POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' + `Authorization: ${auth.Authorization}\r\nContent-Length: 100\r\n\r\n{"message"`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    }, 15000);

    it('incomplete headers are answered 408 after HTTP_HEADERS_TIMEOUT_MS', async () => {
      const answer = await sendPartial('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    }, 15000);

    it('a stream that lasts longer than the request timeout is not cut (the timeout covers receiving the request)', async () => {
      weather.delayMs = REQUEST_TIMEOUT_MS + 500; // two weather calls: the stream outlives the timeout at least twice over
      try {
        const slow = await readSse(`${base}/api/chat/stream`, {
          method: 'POST',
          headers: { ...t.auth(uniqueUser('slow')), 'Content-Type': 'application/json' },
          body: JSON.stringify({ message: 'weather in Paris' }),
        });
        expect(slow.status).toBe(200);
        expect(slow.events.at(-1)!.event).toBe('done');
        expect(slow.events.at(-1)!.data.response).toMatch(/Paris/);
      } finally {
        weather.delayMs = 0;
      }
    }, 20000);
  });
});
