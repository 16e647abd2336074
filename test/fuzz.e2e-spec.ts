import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { isStorableText, toStorableText } from '../src/common/storable-text.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

/**
 * Arbitrary Unicode through every string field of every route: NUL and other
 * controls, lone surrogates, right-to-left marks and overrides, combining
 * marks, zero-width characters, Chinese, emoji, long runs. Every answer must
 * be below 500, and whatever was stored must read back exactly as sent.
 */
const HOSTILE_PIECES = [
  '\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ufffd', '\u202e', '\u202d', '\u200f', '\u061c', '\u0301', '\u0336',
  '\u200b', '\u200d', '\ufeff', '\u2028', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', 'שלום', 'مرحبا', '退货政策', '积分',
  '👩‍👩‍👧', '🇨🇳', 'e\u0301', ' ', '"', '\\', '%00', '{"a":1}', '<script>', 'Aurora X1', 'warranty',
];
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_PIECES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }) },
);
const hostileText = fc.oneof(
  fc.string({ unit, minLength: 0, maxLength: 40 }),
  fc.string({ unit: fc.oneof(fc.constantFrom('\u202e', '\u0301', '\u200b', 'שלום', '退货政策', '👩‍👩‍👧', ' ', 'Aurora X1')), minLength: 1, maxLength: 12 }),
);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

describe('Fuzz: arbitrary Unicode through every string field', () => {
  let t: TestApp;
  const jwt = new JwtService({ secret: TEST_JWT_SECRET });
  const tokenFor = (sub: unknown) => `Bearer ${jwt.sign({ sub } as object, { algorithm: 'HS256', expiresIn: '1h' })}`;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0', RATE_LIMIT_SEARCH_PER_MINUTE: '0', RATE_LIMIT_UPLOAD_PER_MINUTE: '0' });
  });
  afterAll(() => t.close());

  const below500 = (status: number, what: string) => {
    if (status >= 500) throw new Error(`${what} answered ${status}`);
  };

  it('chat messages: 200 with the message stored exactly, or 400; never 5xx', async () => {
    const user = uniqueUser('fuzz-chat');
    let storedCount = 0;
    await fc.assert(
      fc.asyncProperty(hostileText, fc.boolean(), async (message, streamed) => {
        const route = streamed ? '/api/chat/stream' : '/api/chat';
        const res = await request(t.app.getHttpServer()).post(route).set(t.auth(user)).send({ message });
        below500(res.status, `${route} ${JSON.stringify(message)}`);
        expect([200, 400]).toContain(res.status);
        if (res.status !== 200) return;
        const sessionId = streamed ? /"session_id":"([^"]+)"/.exec(res.text)?.[1] : res.body.session_id;
        expect(sessionId).toBeDefined();
        const stored = await request(t.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(t.auth(user));
        below500(stored.status, 'transcript');
        expect(stored.body.messages[0]).toMatchObject({ type: 'human', content: message });
        expect(stored.body.messages).toHaveLength(2);
        storedCount += 1;
      }),
      { numRuns: RUNS },
    );
    expect(storedCount).toBeGreaterThan(0); // the property also exercised the path that stores
    const list = await request(t.app.getHttpServer()).get('/api/sessions?limit=100').set(t.auth(user)).expect(200);
    expect(list.body.sessions.length).toBeGreaterThan(0);
    for (const session of list.body.sessions) {
      expect(isStorableText(session.title)).toBe(true);
    }
  }, 120_000);

  it('session ids, cursors, limits and run ids in paths and queries: 4xx for anything malformed', async () => {
    const user = uniqueUser('fuzz-ids');
    const server = t.app.getHttpServer();
    await fc.assert(
      fc.asyncProperty(hostileText, async (raw) => {
        // A URL cannot carry a lone surrogate; NUL and everything else travel percent-encoded.
        const encoded = encodeURIComponent(toStorableText(raw.replace(/\u0000/g, '\u0001'))).replace(/%01/g, '%00');
        const answers = await Promise.all([
          request(server).get(`/api/sessions/${encoded}/messages`).set(t.auth(user)),
          request(server).delete(`/api/sessions/${encoded}`).set(t.auth(user)),
          request(server).get(`/api/sessions?cursor=${encoded}`).set(t.auth(user)),
          request(server).get(`/api/sessions?limit=${encoded}`).set(t.auth(user)),
          request(server).get(`/api/chat/runs/${encoded}/stream`).set(t.auth(user)),
          request(server).delete(`/api/knowledge/documents/${encoded}`).set(t.auth(user, { role: 'admin' })),
          request(server).post('/api/chat').set(t.auth(user)).send({ message: 'hi', session_id: raw }),
        ]);
        answers.forEach((answer, i) => below500(answer.status, `request ${i} with ${JSON.stringify(raw)}`));
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('Last-Event-ID values: 400 or a stream; never 5xx', async () => {
    const user = uniqueUser('fuzz-lei');
    const done = await request(t.app.getHttpServer()).post('/api/chat/stream').set(t.auth(user)).send({ message: 'hello' });
    const runId = /"run_id":"([^"]+)"/.exec(done.text)![1];
    // What an HTTP client can put in a header at all: no control characters but tab.
    const headerText = fc.string({ unit: 'binary-ascii', maxLength: 24 }).filter((s) => !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(s));
    await fc.assert(
      fc.asyncProperty(headerText, async (value) => {
        const res = await request(t.app.getHttpServer()).get(`/api/chat/runs/${runId}/stream`).set(t.auth(user)).set('Last-Event-ID', value);
        below500(res.status, `Last-Event-ID ${JSON.stringify(value)}`);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('knowledge search queries: 200 or 400, never 5xx', async () => {
    const user = uniqueUser('fuzz-search');
    await fc.assert(
      fc.asyncProperty(hostileText, fc.option(fc.oneof(fc.integer(), hostileText)), async (query, topK) => {
        const res = await request(t.app.getHttpServer())
          .post('/api/knowledge/search')
          .set(t.auth(user))
          .send({ query, ...(topK === null ? {} : { top_k: topK }) });
        below500(res.status, `search ${JSON.stringify(query)}`);
        expect([200, 400]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('token subjects: 401 for what cannot be stored, else the identity round-trips exactly', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, async (sub) => {
        const auth = { Authorization: tokenFor(sub) };
        const list = await request(t.app.getHttpServer()).get('/api/sessions').set(auth);
        below500(list.status, `sub ${JSON.stringify(sub)}`);
        expect([200, 401]).toContain(list.status);
        if (list.status !== 200) return;
        const session = randomUUID();
        const turn = await request(t.app.getHttpServer()).post('/api/chat').set(auth).send({ message: 'hello', session_id: session });
        below500(turn.status, 'turn');
        const [row] = await t.dataSource.query('SELECT user_id FROM chat_sessions WHERE id = $1', [session]);
        expect(row.user_id).toBe(sub);
        await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(auth).expect(200);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('uploaded file names and contents: 201 with the name stored exactly, or 400/422; never 5xx', async () => {
    const admin = t.auth(uniqueUser('fuzz-upload'), { role: 'admin' });
    const percentEncoded = (text: string) => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    let storedCount = 0;
    await fc.assert(
      fc.asyncProperty(hostileText, fc.constantFrom('.txt', '.md'), hostileText, async (stem, extension, content) => {
        const name = `${stem}${extension}`;
        const boundary = `----fuzz${randomUUID()}`;
        // RFC 5987 filename*: any code point travels percent-encoded as UTF-8 (a lone surrogate as U+FFFD, as every UTF-8 encoder writes it).
        const body = Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${percentEncoded(name)}\r\n`, 'latin1'),
          Buffer.from('Content-Type: text/plain\r\n\r\n', 'latin1'),
          Buffer.from(`${content} ${randomUUID()}`, 'utf8'),
          Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1'),
        ]);
        const res = await request(t.app.getHttpServer())
          .post('/api/knowledge/documents')
          .set(admin)
          .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
          .send(body);
        below500(res.status, `upload ${JSON.stringify(name)}`);
        expect([201, 400, 415, 422]).toContain(res.status);
        if (res.status !== 201) return;
        storedCount += 1;
        const sent = Buffer.from(name, 'utf8').toString('utf8');
        expect(res.body.document.filename).toBe(sent);
        const listed = await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(admin).expect(200);
        expect(listed.body.documents.find((d: { id: string }) => d.id === res.body.document.id)?.filename).toBe(sent);
        await request(t.app.getHttpServer()).delete(`/api/knowledge/documents/${res.body.document.id}`).set(admin).expect(200);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    expect(storedCount).toBeGreaterThan(0);
  }, 120_000);

  it('a megabyte in every string field: 4xx (or a closed connection for oversized headers), never 5xx', async () => {
    const user = uniqueUser('fuzz-mega');
    const server = t.app.getHttpServer();
    const mega = 'x'.repeat(1024 * 1024);
    const nearlyMega = '好'.repeat(300_000); // under BODY_LIMIT as JSON, far over every field's length limit
    const answers = await Promise.all([
      request(server).post('/api/chat').set(t.auth(user)).send({ message: nearlyMega }),
      request(server).post('/api/chat').set(t.auth(user)).send({ message: mega }),
      request(server).post('/api/chat').set(t.auth(user)).send({ message: 'hi', session_id: nearlyMega }),
      request(server).post('/api/knowledge/search').set(t.auth(user)).send({ query: nearlyMega }),
      request(server).post('/api/chat/stream').set(t.auth(user)).send({ message: nearlyMega }),
      request(server)
        .post('/api/knowledge/documents')
        .set(t.auth(user, { role: 'admin' }))
        .attach('file', Buffer.from('a document'), `${'n'.repeat(200_000)}.txt`),
    ]);
    answers.forEach((answer, i) => {
      below500(answer.status, `request ${i}`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
    });
    // Megabyte headers and query strings: Node refuses them (431) or drops the connection; the service stays up.
    for (const attempt of [
      () => request(server).get(`/api/sessions?cursor=${mega}`).set(t.auth(user)),
      () => request(server).get('/api/sessions').set('Authorization', tokenFor(mega)),
    ]) {
      const res = await attempt().catch(() => null);
      if (res) below500(res.status, 'oversized header or URL');
    }
    await request(server).get('/api/sessions').set(t.auth(user)).expect(200);
  }, 60_000);

  it('unknown and prototype keys, any value types and depths in bodies: 4xx, never 5xx', async () => {
    const user = uniqueUser('fuzz-body');
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }),
      fc.dictionary(fc.constantFrom('message', 'session_id', '__proto__', 'constructor', 'query', 'top_k', 'prototype'), fc.jsonValue({ maxDepth: 3 })),
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const text = JSON.stringify(payload);
        for (const route of ['/api/chat', '/api/knowledge/search']) {
          const res = await request(t.app.getHttpServer()).post(route).set(t.auth(user)).set('Content-Type', 'application/json').send(text);
          below500(res.status, `${route} ${text.slice(0, 200)}`);
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
