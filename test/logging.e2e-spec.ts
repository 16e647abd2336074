import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

describe('Structured logs', () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info' }, sink);
  });
  afterAll(() => t.close());

  it('writes JSON lines, and every line written while handling a request carries its id', async () => {
    lines.length = 0;
    const res = await request(t.app.getHttpServer()).get(`/api/sessions/${randomUUID()}/messages`).set(t.auth(uniqueUser())).set('x-request-id', 'req-abc-123').expect(404);
    expect(res.headers['x-request-id']).toBe('req-abc-123');
    expect(res.body.request_id).toBe('req-abc-123');
    const completed = lines.find((l) => l.msg === 'request completed');
    expect(completed).toMatchObject({ request_id: 'req-abc-123', level: 40, res: { statusCode: 404 } });
    expect(JSON.stringify(completed)).not.toMatch(/Bearer/);
    expect(lines.every((l) => l.request_id === 'req-abc-123')).toBe(true);
  });

  it('replaces an unsafe incoming request id with a generated one', async () => {
    const res = await request(t.app.getHttpServer()).get('/health').set('x-request-id', 'bad id with spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
