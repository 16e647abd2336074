import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { JwtService } from '@nestjs/jwt';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { startService } from './support/service-process.js';
import { TEST_JWT_SECRET, testDatabaseUrl } from './support/test-env.js';

function throughProxy(url: string, port: number): string {
  const u = new URL(url);
  u.host = `127.0.0.1:${port}`;
  return u.toString();
}

describe('Health and database outage', () => {
  let t: TestApp;
  let pgProxy: TcpProxy;
  beforeAll(async () => {
    const pg = new URL(testDatabaseUrl());
    pgProxy = await new TcpProxy(pg.hostname, Number(pg.port || 5432)).start();
    t = await createTestApp({ DATABASE_URL: throughProxy(testDatabaseUrl(), pgProxy.port) });
  });
  afterAll(async () => {
    await t.close();
    await pgProxy.stop();
  });

  it('reports both dependencies up', async () => {
    const res = await request(t.app.getHttpServer()).get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', details: { database: { status: 'up' }, cache: { status: 'up' } } });
  });

  it('answers 503 while PostgreSQL is unreachable, for health and data routes, then recovers', async () => {
    const user = uniqueUser('dbdown');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [{ type: 'human', content: 'stored before the outage' }]);

    pgProxy.setMode('refuse');
    const health = await request(t.app.getHttpServer()).get('/health').expect(503);
    expect(health.body).toMatchObject({ status: 'error', details: { database: { status: 'down' }, cache: { status: 'up' } } });
    const list = await request(t.app.getHttpServer()).get('/api/sessions?limit=5').set(t.auth(uniqueUser())).expect(503);
    expect(list.body.message).toMatch(/Database unavailable/);

    pgProxy.setMode('forward');
    await request(t.app.getHttpServer()).get('/health').expect(200);
    const messages = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(messages.body.messages[0].content).toBe('stored before the outage');
  });
});

describe('Graceful shutdown of the real process', () => {
  it('on SIGTERM finishes the request in flight, then exits 0 having closed its pools', async () => {
    const pg = new URL(testDatabaseUrl());
    const heldPg = await new TcpProxy(pg.hostname, Number(pg.port || 5432)).start();
    // The built service, as `npm run build` leaves it (the test command builds before running Jest).
    const service = await startService({ DATABASE_URL: throughProxy(testDatabaseUrl(), heldPg.port), KNOWLEDGE_SEED_ON_START: 'false' });
    try {
      const token = new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: uniqueUser('shutdown') }, { expiresIn: '1h' });
      heldPg.hold(); // the request's query waits at the database link until SIGTERM has been sent
      const response = request(service.baseUrl)
        .get('/api/sessions?cursor=' + Buffer.from(`1.${randomUUID()}`).toString('base64url'))
        .set('Authorization', `Bearer ${token}`)
        .then((res) => res);
      await heldPg.waitForHeld(1);
      service.kill('SIGTERM');
      await service.waitForLog(/shutting down/);
      heldPg.release();

      const res = await response;
      expect(res.status).toBe(200);
      expect((await service.exited).code).toBe(0);
      expect(service.output()).toContain('shutdown complete');
      // Once stopped, it accepts nothing more.
      await expect(request(service.baseUrl).get('/health')).rejects.toThrow();
    } finally {
      await service.stop();
      await heldPg.stop();
    }
  }, 60000);
});
