import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { proxyToTestRedis, TcpProxy } from './support/tcp-proxy.js';
import { testRedisUrlThrough } from './support/test-env.js';

const COMMAND_TIMEOUT_MS = 150;

/** Asks /health until it sees Redis answer (a successful health ping puts the cache back in use). */
async function waitForCacheUp(server: Parameters<typeof request>[0]): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const health = await request(server).get('/health');
    if (health.body?.details?.cache?.status === 'up') return;
  }
  throw new Error('the cache did not come back');
}

describe('Redis outage: answers from PostgreSQL, never a 500', () => {
  describe('Redis unreachable from the start (closed port)', () => {
    let t: TestApp;
    beforeAll(async () => {
      const closed = await proxyToTestRedis();
      const port = closed.port;
      await closed.stop(); // nothing listens there any more
      t = await createTestApp({ REDIS_URL: testRedisUrlThrough(port) });
    });
    afterAll(() => t.close());

    it('serves every session route and reports the cache down in /health with 200', async () => {
      const user = uniqueUser('nocache');
      const session = randomUUID();
      await t.storage.appendTurn(user, session, [
        { type: 'human', content: '你好' },
        { type: 'ai', content: 'hello' },
      ]);
      const server = t.app.getHttpServer();
      const list = await request(server).get('/api/sessions').set(t.auth(user)).expect(200);
      expect(list.body.sessions[0]).toMatchObject({ session_id: session, message_count: 2 });
      const messages = await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(messages.body.messages).toHaveLength(2);
      await request(server).delete(`/api/sessions/${session}`).set(t.auth(user)).expect(200);
      await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(404);

      const health = await request(server).get('/health').expect(200);
      expect(health.body.status).toBe('degraded');
      expect(health.body.details.database.status).toBe('up');
      expect(health.body.details.cache.status).toBe('down');
    });

    it('stays ready for the load balancer: without Redis every instance still serves, from PostgreSQL', async () => {
      const ready = await request(t.app.getHttpServer()).get('/health/ready');
      expect({ status: ready.status, body: ready.body }).toMatchObject({ status: 200, body: { status: 'ready', details: { cache: { status: 'down' } } } });
    });
  });

  describe('Redis stalls, then comes back', () => {
    let t: TestApp;
    let proxy: TcpProxy;
    beforeAll(async () => {
      proxy = await proxyToTestRedis();
      t = await createTestApp({
        REDIS_URL: testRedisUrlThrough(proxy.port),
        CACHE_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      });
    });
    afterAll(async () => {
      await t.close();
      await proxy.stop();
    });

    it('answers within a bounded time while stalled, and never serves data changed during the outage', async () => {
      const user = uniqueUser('stall');
      const session = randomUUID();
      const server = t.app.getHttpServer();
      await t.storage.appendTurn(user, session, [{ type: 'human', content: 'before outage' }]);
      // Warm both caches.
      await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      await request(server).get('/api/sessions').set(t.auth(user)).expect(200);

      // The proxy never answers again until switched back: a read that completes did not wait for Redis.
      proxy.setMode('stall');
      const stalledRead = await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(stalledRead.body.messages).toHaveLength(1);

      // A turn committed while the cache cannot be invalidated.
      await t.storage.appendTurn(user, session, [{ type: 'ai', content: 'during outage' }]);
      const during = await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(during.body.messages.map((m: { content: string }) => m.content)).toEqual(['before outage', 'during outage']);
      const health = await request(server).get('/health').expect(200);
      expect(health.body.details.cache.status).toBe('down');

      // Redis answers again: the stale entries written before the outage must not come back.
      proxy.setMode('forward');
      await waitForCacheUp(server); // the cache is used again from here on
      const after = await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(after.body.messages.map((m: { content: string }) => m.content)).toEqual(['before outage', 'during outage']);
      const list = await request(server).get('/api/sessions').set(t.auth(user)).expect(200);
      expect(list.body.sessions[0].message_count).toBe(2);

      const recovered = await request(server).get('/health').expect(200);
      expect(recovered.body).toMatchObject({ status: 'ok', details: { cache: { status: 'up' } } });
    });

    it('goes back to the cache after recovery', async () => {
      proxy.setMode('forward');
      const server = t.app.getHttpServer();
      await waitForCacheUp(server);
      const user = uniqueUser('recover');
      const session = randomUUID();
      await t.storage.appendTurn(user, session, [{ type: 'human', content: 'cached again' }]);
      await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      await t.dataSource.query(`UPDATE chat_messages SET content = 'hidden by cache' WHERE session_id = $1`, [session]);
      const hit = await request(server).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
      expect(hit.body.messages[0].content).toBe('cached again');
    });
  });
});
