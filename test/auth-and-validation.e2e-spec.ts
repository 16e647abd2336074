import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

describe('Auth guard and input validation', () => {
  let t: TestApp;
  const server = () => t.app.getHttpServer();

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT: '10kb' });
  });
  afterAll(() => t.close());

  describe('401 with a clear body', () => {
    const sign = (payload: object, secret = TEST_JWT_SECRET, options: object = {}) => new JwtService({ secret }).sign(payload, { algorithm: 'HS256', ...options });

    it.each([
      ['no header', undefined, /Missing Authorization header/],
      ['not a bearer header', 'Basic dXNlcjpwYXNz', /Malformed Authorization header/],
      ['bearer without token', 'Bearer', /Malformed Authorization header/],
      ['garbage token', 'Bearer not.a.jwt', /Invalid token/],
    ])('%s', async (_name, header, message) => {
      const req = request(server()).get('/api/sessions');
      if (header) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(res.body.message).toMatch(message);
      expect(res.body.request_id).toEqual(res.headers['x-request-id']);
    });

    it('expired token', async () => {
      const token = sign({ sub: 'u1', exp: Math.floor(Date.now() / 1000) - 60 });
      const res = await request(server()).get('/api/sessions').set('Authorization', `Bearer ${token}`).expect(401);
      expect(res.body.message).toBe('Token expired');
    });

    it('token signed with another secret', async () => {
      const token = sign({ sub: 'u1' }, 'some-other-secret-of-enough-length');
      const res = await request(server()).get('/api/sessions').set('Authorization', `Bearer ${token}`).expect(401);
      expect(res.body.message).toMatch(/Invalid token/);
    });

    it('tampered payload', async () => {
      const [header, , signature] = sign({ sub: 'alice' }).split('.');
      const forged = Buffer.from(JSON.stringify({ sub: 'admin', role: 'admin' })).toString('base64url');
      await request(server()).get('/api/sessions').set('Authorization', `Bearer ${header}.${forged}.${signature}`).expect(401);
    });

    it('unsigned token (alg none)', async () => {
      const head = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const body = Buffer.from(JSON.stringify({ sub: 'alice' })).toString('base64url');
      await request(server()).get('/api/sessions').set('Authorization', `Bearer ${head}.${body}.`).expect(401);
    });

    it('token with a critical header extension it does not understand (RFC 7515 crit)', async () => {
      const token = sign({ sub: 'alice' }, TEST_JWT_SECRET, { expiresIn: '1h', header: { alg: 'HS256', typ: 'JWT', crit: ['x-unknown'], 'x-unknown': 1 } });
      const res = await request(server()).get('/api/sessions').set('Authorization', `Bearer ${token}`).expect(401);
      expect(res.body.message).toMatch(/crit/);
    });

    it('token without sub', async () => {
      const res = await request(server())
        .get('/api/sessions')
        .set('Authorization', `Bearer ${sign({ role: 'admin' })}`)
        .expect(401);
      expect(res.body.message).toMatch(/"sub"/);
    });

    it('health needs no token', async () => {
      await request(server()).get('/health').expect(200);
    });
  });

  describe('400 naming the field, 413 for large bodies', () => {
    it('rejects a non-UUID session id', async () => {
      const res = await request(server()).get('/api/sessions/not-a-uuid/messages').set(t.auth(uniqueUser())).expect(400);
      expect(res.body.message).toMatch(/session_id must be a UUID/);
      await request(server()).delete('/api/sessions/123').set(t.auth(uniqueUser())).expect(400);
    });

    it('rejects unknown query fields and wrong types', async () => {
      const auth = t.auth(uniqueUser());
      const unknown = await request(server()).get('/api/sessions?page=2').set(auth).expect(400);
      expect(unknown.body.message).toMatch(/property page should not exist/);
      const wrongType = await request(server()).get('/api/sessions?limit=abc').set(auth).expect(400);
      expect(wrongType.body.message).toMatch(/limit must be an integer/);
      const outOfRange = await request(server()).get('/api/sessions?limit=1000').set(auth).expect(400);
      expect(outOfRange.body.message).toMatch(/limit must not be greater than 100/);
    });

    it('rejects a cursor it did not issue', async () => {
      const res = await request(server()).get('/api/sessions?cursor=bm90LWEtY3Vyc29y').set(t.auth(uniqueUser())).expect(400);
      expect(res.body.message).toMatch(/cursor is invalid/);
    });

    it('rejects malformed JSON with 400 and oversized bodies with 413, losing nothing stored', async () => {
      const user = uniqueUser();
      const session = randomUUID();
      await t.storage.appendTurn(user, session, [{ type: 'human', content: 'keep me' }]);

      const malformed = await request(server()).delete(`/api/sessions/${session}`).set(t.auth(user)).set('Content-Type', 'application/json').send('{"broken": ').expect(400);
      expect(malformed.body).toMatchObject({ statusCode: 400, message: 'Malformed JSON in request body' });

      const tooLarge = await request(server())
        .delete(`/api/sessions/${session}`)
        .set(t.auth(user))
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ padding: 'x'.repeat(20 * 1024) }))
        .expect(413);
      expect(tooLarge.body.message).toMatch(/too large/);

      const still = await request(server()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(still.body.messages).toHaveLength(1);
    });

    it.each([
      ['gzip', 'gzip', Buffer.from('{"query": "not compressed at all"}'), 'Request body is not valid gzip (Content-Encoding: gzip)'],
      ['gzip cut short', 'gzip', gzipSync('{"query": "warranty"}').subarray(0, 12), 'Request body is not valid gzip (Content-Encoding: gzip)'],
      ['deflate', 'deflate', Buffer.from('{"query": "x"}'), 'Request body is not valid deflate (zlib) data (Content-Encoding: deflate)'],
      ['br', 'br', Buffer.from('{"query": "x"}'), 'Request body is not valid Brotli data (Content-Encoding: br)'],
    ])('a body that is not valid %s is a 400 in our own words, not the decompressor’s', async (_name, encoding, body, message) => {
      const res = await request(server())
        .post('/api/knowledge/search')
        .set(t.auth(uniqueUser()))
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize((raw: unknown) => raw as string) // superagent would otherwise JSON-encode the Buffer
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'invalid_request', message });
      expect(JSON.stringify(res.body)).not.toMatch(/header check|end of file|Decompression failed|Z_DATA_ERROR/i);
      expect(res.body.request_id).toEqual(res.headers['x-request-id']);
      // The OpenAI-compatible route says the same in its own error shape.
      const v1 = await request(server())
        .post('/v1/chat/completions')
        .set(t.auth(uniqueUser()))
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize((raw: unknown) => raw as string)
        .send(body);
      expect(v1.status).toBe(400);
      expect(v1.body.error).toMatchObject({ message, type: 'invalid_request_error' });
    });

    it('a valid gzip body is still read', async () => {
      const res = await request(server())
        .post('/api/knowledge/search')
        .set(t.auth(uniqueUser()))
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize((raw: unknown) => raw as string) // superagent would otherwise JSON-encode the Buffer
        .send(gzipSync(JSON.stringify({ query: 'warranty' })));
      expect(res.status).toBe(200);
    });

    it('answers unknown routes with 404 in the same error shape', async () => {
      const res = await request(server()).get('/api/nope').set(t.auth(uniqueUser())).expect(404);
      expect(res.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
    });
  });
});
