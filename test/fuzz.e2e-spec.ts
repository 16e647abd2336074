import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { isStorableText, toStorableText } from '../src/common/storable-text.js';
import { UiSessionIds } from '../src/protocols/ai-sdk/ui-session-id.js';
import { adminAuth } from './support/admin.js';
import { generateSigningKey, JwksServer, SigningKey } from './support/jwks-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { propertyRuns } from './support/property-runs.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

/**
 * Arbitrary Unicode through every string field of every route: NUL and other
 * controls, lone surrogates, right-to-left marks and overrides, combining
 * marks, zero-width characters, Chinese, emoji, long runs. Every answer must
 * be below 500, and whatever was stored must read back exactly as sent.
 */
const HOSTILE_PIECES = [
  '\u0000',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ufffd',
  '\u202e',
  '\u202d',
  '\u200f',
  '\u061c',
  '\u0301',
  '\u0336',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u2028',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  'שלום',
  'مرحبا',
  '退货政策',
  '积分',
  '👩‍👩‍👧',
  '🇨🇳',
  'e\u0301',
  ' ',
  '"',
  '\\',
  '%00',
  '{"a":1}',
  '<script>',
  'Aurora X1',
  'warranty',
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
const RUNS = propertyRuns(30);

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
        // eslint-disable-next-line no-control-regex -- NUL is the character under test
        const encoded = encodeURIComponent(toStorableText(raw.replace(/\u0000/g, '\u0001'))).replace(/%01/g, '%00');
        const answers = await Promise.all([
          request(server).get(`/api/sessions/${encoded}/messages`).set(t.auth(user)),
          request(server).delete(`/api/sessions/${encoded}`).set(t.auth(user)),
          request(server).get(`/api/sessions?cursor=${encoded}`).set(t.auth(user)),
          request(server).get(`/api/sessions?limit=${encoded}`).set(t.auth(user)),
          request(server).get(`/api/chat/runs/${encoded}/stream`).set(t.auth(user)),
          request(server)
            .delete(`/api/knowledge/documents/${encoded}`)
            .set(t.auth(user, { role: 'admin' })),
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
    // eslint-disable-next-line no-control-regex -- control characters are what a header cannot carry
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
    const admin = adminAuth(t, 'fuzz-upload');
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
          .post('/api/knowledge/documents?wait=true')
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
        .post('/api/knowledge/documents?wait=true')
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

/**
 * The same hostile text through the routes of the OpenAI-compatible API, the
 * AI SDK UI stream and the API keys, and as bearer credentials: `rk-` keys and
 * JWTs with hostile headers, against an app that also trusts an identity
 * provider (RS256/ES256). Nothing answers 5xx, stored text reads back exactly,
 * and every /v1 error is the OpenAI shape.
 */
describe('Fuzz: /v1, /api/chat/ui, /api/keys and bearer credentials', () => {
  const ISSUER = 'https://idp.fuzz.test/';
  const AUDIENCE = 'rag-chat-fuzz';
  let t: TestApp;
  let jwks: JwksServer;
  let rsa: SigningKey;
  let ec: SigningKey;

  beforeAll(async () => {
    rsa = await generateSigningKey('fuzz-rsa', 'RS256');
    ec = await generateSigningKey('fuzz-ec', 'ES256');
    jwks = await JwksServer.start([rsa, ec]);
    t = await createTestApp({
      RATE_LIMIT_CHAT_PER_MINUTE: '0',
      RATE_LIMIT_SEARCH_PER_MINUTE: '0',
      RATE_LIMIT_UPLOAD_PER_MINUTE: '0',
      KNOWLEDGE_SEED_ON_START: 'false',
      JWT_JWKS_URL: jwks.url,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await jwks?.stop();
  });

  const server = () => t.app.getHttpServer();
  const modelId = () => t.config.chat.openAiModelId;
  const below500 = (status: number, what: string) => {
    if (status >= 500) throw new Error(`${what} answered ${status}`);
  };
  /** A 4xx in exactly the OpenAI API's error shape, `{error: {message, type, param, code}}`. */
  const expectOpenAiError = (res: request.Response, what: string) => {
    below500(res.status, what);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    const { error } = res.body;
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(typeof error.message).toBe('string');
    expect(typeof error.type).toBe('string');
    expect(error.param === null || typeof error.param === 'string').toBe(true);
    expect(error.code === null || typeof error.code === 'string').toBe(true);
  };
  /** The `data:` payloads of an SSE body that are JSON. */
  const sseData = (text: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
      .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
  /** A stream the service opened must end properly, with no error chunk (the stream's own 5xx). */
  const expectCleanCompletionStream = (res: request.Response, what: string) => {
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const errors = sseData(res.text).filter((chunk) => 'error' in chunk);
    if (errors.length > 0) throw new Error(`${what} streamed an error: ${JSON.stringify(errors)}`);
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
  };
  const transcript = async (user: string, session: string) => {
    const res = await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user));
    below500(res.status, 'transcript');
    expect(res.status).toBe(200);
    return res.body.messages as Array<{ type: string; content: string }>;
  };
  /** What an HTTP client can send in a header: no control characters but tab, nothing above U+00FF. */
  const headerUnit = fc.oneof(
    fc.constantFrom('\t', ' ', '"', '\\', ',', ';', '=', '%00', '{}', '\u00a0', '\u00ff', '\u0085', 'é', 'rk-'),
    fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
  );
  const headerText = fc.string({ unit: headerUnit, maxLength: 60 });
  // eslint-disable-next-line no-control-regex -- NUL is the character under test
  const pathSegment = (raw: string) => encodeURIComponent(toStorableText(raw.replace(/\u0000/g, '\u0001'))).replace(/%01/g, '%00');
  const completion = (user: string, body: unknown, headers: Record<string, string> = {}) =>
    request(server())
      .post('/v1/chat/completions')
      .set(t.auth(user))
      .set(headers)
      .send(body as object);

  it('/v1/chat/completions message content, as a string or as text parts: a completion (a session turn stored exactly) or an OpenAI 400', async () => {
    const user = uniqueUser('fuzz-v1');
    let storedCount = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileText, fc.array(hostileText, { minLength: 1, maxLength: 3 })),
        fc.option(hostileText),
        fc.boolean(),
        fc.boolean(),
        async (content, system, stream, withSession) => {
          const session = withSession ? randomUUID() : undefined;
          const last = typeof content === 'string' ? content : content.map((text) => ({ type: 'text', text }));
          const messages = [...(system === null ? [] : [{ role: 'system', content: system }]), { role: 'user', content: last }];
          const what = `/v1/chat/completions ${JSON.stringify({ messages, stream, session })}`;
          const res = await completion(user, { model: modelId(), messages, stream }, session ? { 'X-Session-Id': session } : {});
          below500(res.status, what);
          expect([200, 400]).toContain(res.status);
          if (res.status !== 200) {
            expectOpenAiError(res, what);
            return;
          }
          if (stream) expectCleanCompletionStream(res, what);
          else expect(res.body).toMatchObject({ object: 'chat.completion', model: modelId(), choices: [{ message: { role: 'assistant' } }] });
          if (!session) return;
          const sent = typeof content === 'string' ? content : content.join('');
          const stored = await transcript(user, session);
          expect(stored[0]).toMatchObject({ type: 'human', content: sent });
          expect(stored).toHaveLength(2);
          storedCount += 1;
        },
      ),
      { numRuns: RUNS },
    );
    expect(storedCount).toBeGreaterThan(0);
  }, 120_000);

  it('/v1/chat/completions model, stop, metadata and X-Session-Id: 200, or a 4xx in the OpenAI shape naming the parameter', async () => {
    const user = uniqueUser('fuzz-v1-fields');
    const question = [{ role: 'user', content: 'What is the warranty period?' }];
    const uuidVariant = fc
      .tuple(fc.uuid(), fc.constantFrom('', ' ', '\t', '{', '}', 'x', '-', '\u00a0'), fc.constantFrom('', ' ', '}', '0', '\u00e9'), fc.boolean())
      .map(([id, before, after, upper]) => `${before}${upper ? id.toUpperCase() : id}${after}`);
    await fc.assert(
      fc.asyncProperty(
        hostileText,
        fc.oneof(
          hostileText.map((s): string | string[] => s),
          fc.array(hostileText, { maxLength: 5 }),
        ),
        fc.dictionary(fc.oneof(hostileText, fc.constantFrom('session_id', '__proto__', 'constructor', 'toString')), fc.oneof(hostileText, fc.jsonValue({ maxDepth: 1 })), {
          maxKeys: 3,
        }),
        fc.oneof(headerText, uuidVariant),
        fc.oneof(hostileText, uuidVariant),
        async (model, stop, metadata, sessionHeader, sessionField) => {
          const cases: Array<[string, () => request.Test, number[]]> = [
            ['model', () => completion(user, { model, messages: question }), [400, 404]],
            ['stop', () => completion(user, { model: modelId(), messages: question, stop }), [200, 400]],
            ['metadata', () => completion(user, { model: modelId(), messages: question, metadata }), [200, 400]],
            ['metadata.session_id', () => completion(user, { model: modelId(), messages: question, metadata: { session_id: sessionField } }), [200, 400]],
            ['X-Session-Id', () => completion(user, { model: modelId(), messages: question }, { 'X-Session-Id': sessionHeader }), [200, 400]],
          ];
          for (const [field, send, allowed] of cases) {
            const res = await send();
            const what = `/v1/chat/completions ${field} ${JSON.stringify({ model, stop, metadata, sessionHeader, sessionField })}`;
            below500(res.status, what);
            if (!allowed.includes(res.status)) throw new Error(`${what} answered ${res.status}, expected one of ${allowed.join(', ')}`);
            if (res.status === 200) {
              expect(res.body.object).toBe('chat.completion');
              continue;
            }
            expectOpenAiError(res, what);
            if (field === 'model' && res.status === 404) expect(res.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
            if (field === 'metadata.session_id') expect(res.body.error.param).toBe('metadata.session_id');
            if (field === 'X-Session-Id') expect(res.body.error.param).toBe('X-Session-Id');
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, 120_000);

  it('ids in the paths of /v1/models/:model, /api/chat/ui/:id/stream and /api/keys/:id: 4xx (or 204 for a chat with no turn), never 5xx', async () => {
    const user = uniqueUser('fuzz-paths');
    await fc.assert(
      fc.asyncProperty(hostileText, async (raw) => {
        const encoded = pathSegment(raw);
        const [model, resume, revoke] = await Promise.all([
          request(server()).get(`/v1/models/${encoded}`).set(t.auth(user)),
          request(server()).get(`/api/chat/ui/${encoded}/stream`).set(t.auth(user)),
          request(server()).delete(`/api/keys/${encoded}`).set(t.auth(user)),
        ]);
        const what = JSON.stringify(raw);
        if (model.status === 200)
          expect(encoded === '' || raw === modelId()).toBe(true); // `/v1/models/` is the list
        else expectOpenAiError(model, `/v1/models/:model ${what}`);
        below500(resume.status, `/api/chat/ui/:id/stream ${what}`);
        expect([204, 400, 404]).toContain(resume.status);
        below500(revoke.status, `/api/keys/:id ${what}`);
        expect([400, 404]).toContain(revoke.status);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('/api/chat/ui id, message text parts, part types and trigger: a UI message stream with the turn stored exactly, or 400', async () => {
    const chatId = fc.string({ unit: fc.constantFrom(...'abcXYZ019_-'), minLength: 1, maxLength: 100 });
    let storedCount = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(chatId, hostileText, fc.uuid()),
        fc.array(fc.record({ type: fc.oneof({ weight: 4, arbitrary: fc.constant('text') }, { weight: 1, arbitrary: hostileText }), text: hostileText }), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant('submit-message') },
          { weight: 1, arbitrary: fc.constantFrom('regenerate-message', 'Submit-Message', '') },
          { weight: 1, arbitrary: hostileText },
        ),
        fc.option(hostileText),
        async (id, parts, trigger, messageId) => {
          // A user of its own per run: a valid id drawn twice must not meet its earlier session.
          const user = uniqueUser('fuzz-ui');
          const body = { id, trigger, ...(messageId === null ? {} : { messageId }), messages: [{ id: randomUUID(), role: 'user', parts }] };
          const what = `/api/chat/ui ${JSON.stringify(body)}`;
          const res = await request(server()).post('/api/chat/ui').set(t.auth(user)).send(body);
          below500(res.status, what);
          expect([200, 400]).toContain(res.status);
          if (res.status !== 200) return;
          expect(res.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
          const chunks = sseData(res.text);
          const errors = chunks.filter((chunk) => chunk.type === 'error');
          if (errors.length > 0) throw new Error(`${what} streamed an error: ${JSON.stringify(errors)}`);
          expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
          const sent = parts
            .filter((part) => part.type === 'text')
            .map((part) => part.text)
            .join('\n');
          const stored = await transcript(user, t.app.get(UiSessionIds).forChat(user, id));
          expect(stored[0]).toMatchObject({ type: 'human', content: sent });
          expect(stored).toHaveLength(2);
          storedCount += 1;
        },
      ),
      { numRuns: RUNS },
    );
    expect(storedCount).toBeGreaterThan(0);
  }, 120_000);

  it('/api/keys names: 201 with the trimmed name stored and listed exactly, or 400; never 5xx', async () => {
    const user = uniqueUser('fuzz-keys');
    let storedCount = 0;
    await fc.assert(
      fc.asyncProperty(hostileText, fc.option(fc.oneof(fc.integer(), fc.constant(1), hostileText)), async (name, expires) => {
        const body = { name, ...(expires === null ? {} : { expires_in_days: expires }) };
        const res = await request(server()).post('/api/keys').set(t.auth(user)).send(body);
        below500(res.status, `/api/keys ${JSON.stringify(body)}`);
        expect([201, 400]).toContain(res.status);
        if (res.status !== 201) return;
        expect(res.body.name).toBe(name.trim());
        const listed = await request(server()).get('/api/keys').set(t.auth(user)).expect(200);
        expect(listed.body.keys.find((key: { id: string }) => key.id === res.body.id)?.name).toBe(name.trim());
        // The key authenticates as its owner, and the revocation holds.
        await request(server()).get('/v1/models').set('Authorization', `Bearer ${res.body.key}`).expect(200);
        const revoked = await request(server()).delete(`/api/keys/${res.body.id}`).set(t.auth(user)).expect(200);
        expect(revoked.body.name).toBe(name.trim());
        storedCount += 1;
      }),
      { numRuns: RUNS },
    );
    expect(storedCount).toBeGreaterThan(0);
  }, 120_000);

  it('bearer values that look like rk- keys or JWTs with hostile headers (kid, alg, crit, jku…): 401 (OpenAI-shaped on /v1), never 5xx', async () => {
    const owner = uniqueUser('fuzz-bearer');
    const realKey = (await request(server()).post('/api/keys').set(t.auth(owner)).send({ name: 'fuzz' }).expect(201)).body.key as string;
    const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');
    const base64url = fc.string({ unit: fc.constantFrom(...'ABCxyz0189-_'), minLength: 0, maxLength: 60 });
    const claims = { sub: owner, iss: ISSUER, aud: AUDIENCE };
    const now = () => Math.floor(Date.now() / 1000);
    const headerValue = fc.oneof(hostileText, fc.jsonValue({ maxDepth: 2 }));
    const alg = fc.oneof(fc.constantFrom('RS256', 'ES256', 'HS256', 'none', 'None', 'PS256', 'HS512', 'rs256', 'RS256 ', ''), headerValue);
    const kid = fc.oneof(fc.constantFrom(rsa.kid, ec.kid, '../../etc/passwd', '*', ''), headerValue);
    const extraHeader = fc.dictionary(fc.constantFrom('crit', 'b64', 'jku', 'x5u', 'x5c', 'jwk', 'typ', 'cty', 'zip', '__proto__', 'enc'), headerValue, { maxKeys: 3 });

    /**
     * An HS256 token signed here: jsonwebtoken encodes the header as Latin-1, which truncates every
     * character above U+00FF and can leave raw control characters in it (a malformed token, not a hostile one).
     */
    const hs256 = (header: Record<string, unknown>) => {
      const signed = `${b64(header)}.${b64({ sub: owner, iat: now(), exp: now() + 600 })}`;
      return `${signed}.${createHmac('sha256', TEST_JWT_SECRET).update(signed).digest('base64url')}`;
    };
    /** A bearer value, or a token to sign in the property (signing is asynchronous). */
    type Credential = { value: string; mayPass: boolean } | { sign: SigningKey; kid: unknown; claims: Record<string, unknown> };
    const credential: fc.Arbitrary<Credential> = fc.oneof(
      // rk- keys: hostile text, well-formed but unknown, and the real key with something changed.
      headerText.map((s) => ({ value: `rk-${s}`, mayPass: false })),
      fc
        .string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 43, maxLength: 43 })
        .map((s) => ({ value: `rk-${s}`, mayPass: false })),
      fc.tuple(fc.integer({ min: 0, max: realKey.length }), headerText).map(([at, s]) => ({ value: `${realKey.slice(0, at)}${s}${realKey.slice(at + 1)}`, mayPass: true })),
      // Hand-made JWTs: hostile header, any payload, a signature that cannot be right; also with 1, 2, 4 or 5 segments (JWE-like).
      fc
        .tuple(
          fc.record({ alg, kid }, { requiredKeys: [] }),
          extraHeader,
          fc.oneof(fc.constant(claims), fc.jsonValue({ maxDepth: 2 })),
          base64url,
          fc.array(base64url, { maxLength: 3 }),
          fc.boolean(),
        )
        .map(([header, extra, payload, signature, more, short]) => ({
          value: [b64({ ...extra, ...header }), ...(short ? [] : [b64(payload), signature]), ...more].join('.'),
          mayPass: false,
        })),
      // Not JSON, or not an object, in the header segment.
      fc.tuple(hostileText, base64url).map(([header, rest]) => ({ value: `${b64(header)}.${b64(claims)}.${rest}`, mayPass: false })),
      // Really signed by one of the identity provider's keys, with a hostile kid.
      fc.record({
        sign: fc.constantFrom(rsa, ec),
        kid,
        // Hostile claims too: sub, and iat, nbf, aud, iss and role claims of any type.
        claims: fc.dictionary(
          fc.constantFrom('sub', 'iat', 'nbf', 'aud', 'iss', 'role', 'realm_access', 'roles', '__proto__'),
          fc.oneof(hostileText, fc.jsonValue({ maxDepth: 2 })),
          {
            maxKeys: 2,
          },
        ),
      }),
      // Really signed with the HS256 secret, with a hostile kid and extra header fields (HS256 tokens are not looked up by kid).
      fc.tuple(kid, extraHeader).map(([k, extra]) => ({ value: hs256({ ...extra, alg: 'HS256', kid: k }), mayPass: true })),
    );
    const bearerOf = async (c: Credential): Promise<{ value: string; mayPass: boolean }> => {
      if ('value' in c) return c;
      const value = await new SignJWT({ ...claims, iat: now(), exp: now() + 300, ...c.claims })
        .setProtectedHeader({ alg: c.sign.alg, kid: c.kid as string })
        .sign(c.sign.privateKey);
      // An absent kid matches too when the key set holds one key of that algorithm.
      return { value, mayPass: c.kid === c.sign.kid || c.kid === undefined };
    };
    // The credentials the property changes are accepted as they are, so a 401 below is the change's doing.
    for (const control of [
      { value: realKey, mayPass: true },
      { value: hs256({ alg: 'HS256', typ: 'JWT', kid: '退货政策\u202e\u0000', jku: 'http://127.0.0.1:1/' }), mayPass: true },
      { sign: rsa, kid: rsa.kid, claims: {} },
      { sign: ec, kid: ec.kid, claims: { realm_access: { roles: ['admin'] } } },
    ] satisfies Credential[]) {
      const { value } = await bearerOf(control);
      await request(server()).get('/v1/models').set('Authorization', `Bearer ${value}`).expect(200);
    }
    await fc.assert(
      fc.asyncProperty(credential, async (c) => {
        const { value, mayPass } = await bearerOf(c);
        const authorization = `Bearer ${value}`;
        const [models, sessions] = await Promise.all([
          request(server()).get('/v1/models').set('Authorization', authorization),
          request(server()).get('/api/sessions').set('Authorization', authorization),
        ]);
        const what = `Authorization ${JSON.stringify(authorization)}`;
        below500(models.status, `/v1/models ${what}`);
        below500(sessions.status, `/api/sessions ${what}`);
        expect(mayPass ? [200, 401] : [401]).toContain(models.status);
        expect(sessions.status).toBe(models.status);
        if (models.status !== 200) expectOpenAiError(models, `/v1/models ${what}`);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('any JSON body on /v1/chat/completions, /api/chat/ui and /api/keys: 4xx (OpenAI-shaped on /v1) or success, never 5xx', async () => {
    const user = uniqueUser('fuzz-new-bodies');
    const keys = ['model', 'messages', 'stream', 'stop', 'metadata', 'id', 'trigger', 'name', 'expires_in_days', '__proto__', 'constructor', 'prototype'];
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 5 }),
      fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 })),
      fc.record({
        model: fc.constant('rag-agent'),
        messages: fc.array(fc.dictionary(fc.constantFrom('role', 'content', 'name', 'tool_calls', '__proto__'), fc.jsonValue({ maxDepth: 3 })), { maxLength: 3 }),
      }),
      fc.record({
        id: fc.constant('fuzz-chat'),
        trigger: fc.constant('submit-message'),
        messages: fc.array(fc.dictionary(fc.constantFrom('id', 'role', 'parts', '__proto__'), fc.jsonValue({ maxDepth: 3 })), { maxLength: 3 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const text = JSON.stringify(payload);
        for (const route of ['/v1/chat/completions', '/api/chat/ui', '/api/keys']) {
          const res = await request(server()).post(route).set(t.auth(user)).set('Content-Type', 'application/json').send(text);
          below500(res.status, `${route} ${text.slice(0, 300)}`);
          if (route === '/v1/chat/completions' && res.status >= 400) expectOpenAiError(res, `${route} ${text.slice(0, 300)}`);
          if (route === '/api/keys' && res.status === 201) await request(server()).delete(`/api/keys/${res.body.id}`).set(t.auth(user)).expect(200);
        }
      }),
      { numRuns: RUNS },
    );
    // Malformed JSON, bytes that are not UTF-8, other charsets and content types: OpenAI errors on /v1, 4xx everywhere.
    const valid = JSON.stringify({ model: modelId(), messages: [{ role: 'user', content: 'hello' }], id: 'x', trigger: 'submit-message', name: 'k' });
    // Overlong NUL, a lone surrogate encoded as UTF-8, bytes that never occur in UTF-8.
    const invalidUtf8 = Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]);
    const oddBodies: Array<[string, string | Buffer]> = [
      ['application/json', '{"model": '],
      [
        'application/json',
        Buffer.concat([Buffer.from(`{"model": "${modelId()}", "id": "x", "trigger": "submit-message", "name": "`), invalidUtf8, Buffer.from('", "messages": []}')]),
      ],
      ['application/json', Buffer.concat([Buffer.from(`{"model": "${modelId()}", "messages": [{"role": "user", "content": "hi `), invalidUtf8, Buffer.from('"}]}')])],
      ['application/json; charset=utf-16', valid],
      ['application/json; charset=x-unknown', valid],
      ['application/json; charset=latin1', valid],
      ['text/plain', valid],
      ['application/x-www-form-urlencoded', 'model=rag-agent&messages[0][role]=user&messages[0][content]=hi&__proto__[x]=1'],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="model"\r\n\r\nrag-agent\r\n--x--\r\n`],
    ];
    for (const [contentType, payload] of oddBodies) {
      for (const route of ['/v1/chat/completions', '/api/chat/ui', '/api/keys']) {
        // The payload as it is: superagent would otherwise JSON-encode a Buffer sent as application/json.
        const res = await request(server())
          .post(route)
          .set(t.auth(user))
          .set('Content-Type', contentType)
          .serialize((raw: unknown) => raw as string)
          .send(payload);
        const what = `${route} ${contentType} ${JSON.stringify(payload.toString()).slice(0, 120)}`;
        below500(res.status, what);
        if (route === '/api/keys' && res.status === 201) await request(server()).delete(`/api/keys/${res.body.id}`).set(t.auth(user)).expect(200);
        else if (res.status !== 200) expect(res.status).toBeGreaterThanOrEqual(400);
        if (route === '/v1/chat/completions' && res.status >= 400) expectOpenAiError(res, what);
      }
    }
  }, 120_000);

  it('a megabyte in every string field of the new routes: 4xx (OpenAI-shaped on /v1; a closed connection for oversized headers), never 5xx', async () => {
    const user = uniqueUser('fuzz-new-mega');
    const mega = 'x'.repeat(1024 * 1024);
    const nearlyMega = '好'.repeat(300_000); // under BODY_LIMIT as JSON, far over every field's length limit
    const longId = 'a'.repeat(8000); // a path or header that Node still accepts, over every id's limit
    const model = modelId();
    const user1 = (content: unknown) => [{ role: 'user', content }];
    const ui = (override: Record<string, unknown>, part: Record<string, unknown> = { type: 'text', text: 'hello' }) => ({
      id: 'mega-chat',
      trigger: 'submit-message',
      messages: [{ id: 'm1', role: 'user', parts: [part] }],
      ...override,
    });
    const v1 = await Promise.all([
      completion(user, { model, messages: user1(nearlyMega) }),
      completion(user, { model, messages: user1(mega) }),
      completion(user, { model, messages: user1([{ type: 'text', text: nearlyMega }]) }),
      completion(user, { model, messages: [{ role: 'system', content: nearlyMega }, ...user1('hi')] }),
      completion(user, { model: nearlyMega, messages: user1('hi') }),
      completion(user, { model, messages: user1('hi'), stop: nearlyMega }),
      completion(user, { model, messages: user1('hi'), stop: [nearlyMega] }),
      completion(user, { model, messages: user1('hi'), metadata: { session_id: nearlyMega } }),
      completion(user, { model, messages: user1('hi') }, { 'X-Session-Id': longId }),
      request(server()).get(`/v1/models/${longId}`).set(t.auth(user)),
    ]);
    v1.forEach((res, i) => expectOpenAiError(res, `/v1 request ${i}`));
    const others = await Promise.all([
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({ id: nearlyMega })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({ trigger: nearlyMega })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({ messageId: nearlyMega })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({}, { type: 'text', text: nearlyMega })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({}, { type: nearlyMega, text: 'hello' })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({ messages: [{ id: nearlyMega, role: 'user', parts: [{ type: 'text', text: 'hello' }] }] })),
      request(server())
        .post('/api/chat/ui')
        .set(t.auth(user))
        .send(ui({ id: mega })),
      request(server()).post('/api/keys').set(t.auth(user)).send({ name: nearlyMega }),
      request(server()).post('/api/keys').set(t.auth(user)).send({ name: mega }),
      request(server()).delete(`/api/keys/${longId}`).set(t.auth(user)),
      request(server()).get(`/api/chat/ui/${longId}/stream`).set(t.auth(user)),
      request(server()).get('/api/sessions').set('Authorization', `Bearer rk-${longId}`),
      request(server())
        .get('/api/sessions')
        .set('Authorization', `Bearer ${Buffer.from(JSON.stringify({ alg: 'RS256', kid: longId })).toString('base64url')}.e30.e30`),
    ]);
    others.forEach((res, i) => {
      below500(res.status, `request ${i}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
    });
    // Megabyte headers and URLs: Node refuses them (431) or drops the connection; the service stays up.
    for (const attempt of [
      () => completion(user, { model, messages: user1('hi') }, { 'X-Session-Id': mega }),
      () => request(server()).get(`/v1/models/${mega}`).set(t.auth(user)),
      () => request(server()).delete(`/api/keys/${mega}`).set(t.auth(user)),
      () => request(server()).get(`/api/chat/ui/${mega}/stream`).set(t.auth(user)),
      () => request(server()).get('/v1/models').set('Authorization', `Bearer rk-${mega}`),
    ]) {
      const res = await attempt().catch(() => null);
      if (res) below500(res.status, 'oversized header or URL');
    }
    await request(server()).get('/v1/models').set(t.auth(user)).expect(200);
  }, 60_000);
});
