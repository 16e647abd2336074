import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { JwtService } from '@nestjs/jwt';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { TEST_JWT_SECRET, TEST_REDIS_URL, testDatabaseUrl } from './support/test-env.js';

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
    const messages = await request(t.app.getHttpServer())
      .get(`/api/sessions/${session}/messages`)
      .set(t.auth(user))
      .expect(200);
    expect(messages.body.messages[0].content).toBe('stored before the outage');
  });
});

describe('Graceful shutdown of the real process', () => {
  async function freePort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('on SIGTERM finishes the request in flight, then exits 0 having closed its pools', async () => {
    const pg = new URL(testDatabaseUrl());
    const slowPg = await new TcpProxy(pg.hostname, Number(pg.port || 5432)).start();
    const port = await freePort();
    // The built service, as `npm run build` leaves it (the test command builds before running Jest).
    const child = spawn(process.execPath, ['dist/main.js'], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        NODE_ENV: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: throughProxy(testDatabaseUrl(), slowPg.port),
        REDIS_URL: TEST_REDIS_URL,
        JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 200 && !output.includes('listening'); i += 1) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain('listening');

      slowPg.setDelay(1500); // the next query takes 1.5 s: long enough to send SIGTERM mid-request
      const token = new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: uniqueUser('shutdown') }, { expiresIn: '1h' });
      const inFlight = request(`http://127.0.0.1:${port}`).get('/api/sessions?cursor=' + Buffer.from(`1.${randomUUID()}`).toString('base64url')).set('Authorization', `Bearer ${token}`);
      const response = inFlight.then((res) => res);
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGTERM');

      const res = await response;
      expect(res.status).toBe(200);
      expect(await exited).toBe(0);
      expect(output).toContain('shutdown complete');
      // Once stopped, it accepts nothing more.
      await expect(request(`http://127.0.0.1:${port}`).get('/health')).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await slowPg.stop();
    }
  }, 60000);
});
