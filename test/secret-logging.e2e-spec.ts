import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { ApiKeyService } from '../src/auth/api-keys/api-key.service.js';
import { readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

/**
 * Every credential this service accepts (an API key, an HS256 token, a stream
 * ticket), sent in every place a client might put it by mistake or on
 * purpose, must never reach a log line: neither whole nor its secret part.
 */
describe('Secrets never reach the log', () => {
  const lines: string[] = [];
  /** The request log line of each request id, and who waits for one. */
  const completed = new Map<string, Record<string, any>>();
  const waiters = new Map<string, (line: Record<string, any>) => void>();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        lines.push(line);
        const parsed = JSON.parse(line);
        if (typeof parsed.request_id !== 'string' || !/^request (completed|errored)$/.test(parsed.msg)) continue;
        completed.set(parsed.request_id, parsed);
        waiters.get(parsed.request_id)?.(parsed);
      }
      done();
    },
  });
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'trace', KNOWLEDGE_SEED_ON_START: 'false', RATE_LIMIT_CHAT_PER_MINUTE: '0' }, sink);
    base = await t.listen();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Resolves with the request log line of `requestId` once it is written. */
  function completedLine(requestId: string): Promise<Record<string, any>> {
    const line = completed.get(requestId);
    if (line) return Promise.resolve(line);
    return new Promise((resolve) => waiters.set(requestId, resolve));
  }

  let probes = 0;
  /** Sends one request with fetch (the path is sent as written) and waits for its request log line. */
  async function probe(path: string, headers: Record<string, string> = {}): Promise<{ status: number; line: Record<string, any> }> {
    probes += 1;
    const requestId = `probe-${probes}`;
    const res = await fetch(`${base}${path}`, { headers: { 'x-request-id': requestId, ...headers } });
    await res.arrayBuffer();
    const logged = res.headers.get('x-request-id')!;
    return { status: res.status, line: await completedLine(logged) };
  }

  /** Every character percent-encoded, so the secret's text appears nowhere in the raw URL. */
  const encodeAll = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');

  it('sends each credential in the query, the path and the headers, and finds none of it in the log', async () => {
    const owner = uniqueUser('secrets');
    const auth = t.auth(owner);
    const jwt = auth.Authorization.slice('Bearer '.length);
    const apiKey = (await request(t.app.getHttpServer()).post('/api/keys').set(auth).send({ name: 'log probe' }).expect(201)).body.key as string;
    const turn = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'hello' }),
    });
    const runId = turn.events[0].data.run_id as string;
    const ticket = (await request(t.app.getHttpServer()).post(`/api/chat/runs/${runId}/ticket`).set(auth).expect(200)).body.ticket as string;
    // A token whose header has a space after "{": valid all the same, but its text does not start with "eyJ".
    const spacedHeader = Buffer.from('{ "alg": "HS256", "typ": "JWT" }').toString('base64url');
    const spacedJwt = (() => {
      const signed = new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: owner }, { algorithm: 'HS256', expiresIn: '1h' });
      const [, payload] = signed.split('.');
      const signature = createHmac('sha256', TEST_JWT_SECRET).update(`${spacedHeader}.${payload}`).digest('base64url');
      return `${spacedHeader}.${payload}.${signature}`;
    })();
    await request(t.app.getHttpServer()).get('/api/sessions').set('Authorization', `Bearer ${spacedJwt}`).expect(200);
    const secrets = { apiKey, jwt, ticket, spacedJwt };

    const stream = `/api/chat/runs/${runId}/stream`;
    const names = [
      'api_key',
      'apikey',
      'api-key',
      'apiKey',
      'key',
      'token',
      'access_token',
      'id_token',
      'auth',
      'authorization',
      'jwt',
      'ticket',
      'password',
      'secret',
      'code',
      'limit',
      'cursor',
      'q',
    ];
    for (const secret of Object.values(secrets)) {
      const paths: string[] = [];
      for (const name of names) {
        for (const form of [`${name}=${secret}`, `${name}[]=${secret}`, `${name}[a]=${secret}`, `${name}[0]=${secret}`, `${name}=x&${name}=${secret}`]) {
          paths.push(`/api/sessions?${form}`, `${stream}?${form}`);
        }
      }
      paths.push(
        `${stream}?tick%65t=${secret}`,
        `${stream}?ticket=${encodeAll(secret)}`,
        `/api/sessions?key=${encodeAll(secret)}`,
        `/api/sessions?${secret}`,
        `/api/sessions?abc${secret}`,
        `/api/abc${secret}/x`,
        `/api/sessions?${secret}=1`,
        `/api/sessions?limit=5&${encodeAll(secret)}`,
        `/api/sessions/${secret}/messages`,
        `/api/sessions/${encodeAll(secret)}/messages`,
        `/api/chat/runs/${secret}/stream`,
        `/${secret}`,
        `/v1/${secret}`,
        `/docs/${secret}`,
      );
      for (const path of paths) await probe(path);

      const headerForms: Array<Record<string, string>> = [
        { Authorization: `Bearer ${secret}` },
        { Authorization: secret },
        { Authorization: `bearer   ${secret}` },
        { Authorization: `Token ${secret}` },
        { Authorization: `Basic ${secret}` },
        { Authorization: `Bearer ${secret} extra` },
        { 'Proxy-Authorization': `Bearer ${secret}` },
        { Cookie: `session=${secret}; theme=dark` },
        { Referer: `https://client.example/app?api_key=${secret}` },
        { 'X-Api-Key': secret },
        { 'Api-Key': secret },
        { 'X-Auth-Token': secret },
        { 'X-Session-Id': secret },
        { 'Last-Event-ID': secret },
        { 'User-Agent': `probe ${secret}` },
        { 'X-Request-ID': secret },
      ];
      for (const headers of headerForms) {
        await probe('/api/sessions', headers);
        await probe(stream, headers);
        await probe('/v1/models', headers);
      }
    }

    for (const [name, secret] of Object.entries(secrets)) {
      // The whole credential, and the part of it that is the secret (the key's random part, the token's signature).
      const secretPart = name === 'apiKey' ? secret.slice(3) : secret.split('.')[2];
      const leaking = lines.filter((line) => line.includes(secret) || line.includes(secretPart) || line.includes(secretPart.slice(-12)));
      expect({ name, leaking: leaking.length, sample: leaking.slice(0, 3) }).toEqual({ name, leaking: 0, sample: [] });
    }
    // The log says what was asked: the path, the parameter names, the harmless values.
    const limitLine = (await probe(`/api/sessions?limit=5&api_key=${apiKey}`)).line;
    expect(limitLine.req.url).toBe('/api/sessions?limit=5&api_key=[redacted]');
    const ticketLine = (await probe(`${stream}?ticket[a]=${ticket}`)).line;
    expect(ticketLine.req.url).toBe(`${stream}?ticket[a]=[redacted]`);
  }, 300_000);

  it('logs a failure whose error text holds the credential (a driver echoing its parameters) without it', async () => {
    const owner = uniqueUser('secrets-500');
    const auth = t.auth(owner);
    const apiKey = (await request(t.app.getHttpServer()).post('/api/keys').set(auth).send({ name: 'failing probe' }).expect(201)).body.key as string;
    const keys = t.app.get(ApiKeyService);
    const original = keys.authenticate.bind(keys);
    keys.authenticate = async (key: string) => {
      throw Object.assign(new Error(`lookup failed for ${key} (Authorization: Bearer ${key}, token ${auth.Authorization})`), { parameters: [key] });
    };
    try {
      const { status, line } = await probe(`/api/sessions?cursor=${apiKey}`, { Authorization: `Bearer ${apiKey}` });
      expect(status).toBe(500);
      expect(line.req.url).toBe('/api/sessions?cursor=[redacted]');
    } finally {
      keys.authenticate = original;
    }
    const errorLines = lines.filter((l) => l.includes('"level":50') && l.includes('lookup failed for'));
    expect(errorLines.length).toBeGreaterThan(0);
    for (const secret of [apiKey.slice(3), auth.Authorization.split('.')[2]]) {
      expect(lines.filter((l) => l.includes(secret))).toEqual([]);
    }
  });
});
