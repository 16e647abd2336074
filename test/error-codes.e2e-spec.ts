import request from 'supertest';
import { ERROR_CODE_STATUS } from '../src/common/coded-error.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * The errors the service does not raise itself (Nest's router, the
 * validation pipe, body parsing, multer, guards) answer with a code of the
 * table too, and the status the table gives it.
 */
describe('Error codes of every kind of refusal', () => {
  let t: TestApp;
  const admin = () => t.auth(uniqueUser('codes-admin'), { role: 'admin' });

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT: '2kb', KNOWLEDGE_MAX_UPLOAD_BYTES: '1024', RATE_LIMIT_RUN_CONTROL_PER_MINUTE: '1' });
  });

  afterAll(() => t.close());

  async function expectCode(response: request.Response, code: keyof typeof ERROR_CODE_STATUS): Promise<void> {
    expect({ status: response.status, code: response.body.code }).toEqual({ status: ERROR_CODE_STATUS[code], code });
  }

  it('a path no route matches: route_not_found', async () => {
    await expectCode(await request(t.app.getHttpServer()).get('/api/no-such-route').set(t.auth(uniqueUser())), 'route_not_found');
  });

  it('a missing or bad token: unauthorized; an admin route for a user: forbidden', async () => {
    await expectCode(await request(t.app.getHttpServer()).get('/api/sessions'), 'unauthorized');
    await expectCode(await request(t.app.getHttpServer()).get('/api/sessions').set('Authorization', 'Bearer nope'), 'unauthorized');
    await expectCode(await request(t.app.getHttpServer()).get('/api/knowledge/jobs').set(t.auth(uniqueUser())), 'forbidden');
  });

  it('the validation pipe and parameter pipes: invalid_request', async () => {
    await expectCode(await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(uniqueUser())).send({ message: 42 }), 'invalid_request');
    await expectCode(await request(t.app.getHttpServer()).get('/api/sessions/not-a-uuid').set(t.auth(uniqueUser())), 'invalid_request');
  });

  it('body parsing: malformed_json, payload_too_large', async () => {
    await expectCode(
      await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(uniqueUser())).set('Content-Type', 'application/json').send('{"message": '),
      'malformed_json',
    );
    await expectCode(
      await request(t.app.getHttpServer())
        .post('/api/chat')
        .set(t.auth(uniqueUser()))
        .send({ message: 'x'.repeat(4096) }),
      'payload_too_large',
    );
  });

  it('multer: a file over the upload limit is payload_too_large, a missing file invalid_request', async () => {
    await expectCode(
      await request(t.app.getHttpServer())
        .post('/api/knowledge/documents')
        .set(admin())
        .attach('file', Buffer.from('a'.repeat(2048)), 'big.txt'),
      'payload_too_large',
    );
    await expectCode(await request(t.app.getHttpServer()).post('/api/knowledge/documents').set(admin()).field('name', 'x'), 'invalid_request');
  });

  it('a session, message, run, job or document that does not exist: its own not-found code', async () => {
    const user = t.auth(uniqueUser());
    const missing = '00000000-0000-4000-8000-000000000000';
    await expectCode(await request(t.app.getHttpServer()).get(`/api/sessions/${missing}/messages`).set(user), 'session_not_found');
    await expectCode(await request(t.app.getHttpServer()).get(`/api/chat/runs/${missing}`).set(user), 'run_not_found');
    await expectCode(await request(t.app.getHttpServer()).get(`/api/knowledge/jobs/${missing}`).set(admin()), 'ingest_job_not_found');
  });

  it('over the rate limit: rate_limited', async () => {
    const user = t.auth(uniqueUser());
    const missing = '00000000-0000-4000-8000-000000000000';
    await request(t.app.getHttpServer()).post(`/api/chat/runs/${missing}/cancel`).set(user);
    await expectCode(await request(t.app.getHttpServer()).post(`/api/chat/runs/${missing}/cancel`).set(user), 'rate_limited');
  });
});
