import { randomUUID } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { CheckpointerProvider } from '../src/agent/checkpointer.provider.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { OwnPostgres } from './support/own-postgres.js';
import { OwnRedis } from './support/own-redis.js';
import { ServiceProcess, startService, waitUntil } from './support/service-process.js';
import { openSse, readSse } from './support/sse-client.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { TEST_JWT_SECRET, testDatabaseUrl } from './support/test-env.js';

/**
 * Faults on real processes: a PostgreSQL cluster and a redis-server of the
 * test's own, stopped, paused and killed under the service (in process, or
 * the built service as a child process where the fault is the process dying).
 */
describe('Faults: PostgreSQL and Redis stopped, paused and killed; instances killed mid-turn', () => {
  const postgres = new OwnPostgres();
  const redis = new OwnRedis();
  const weather = new FakeWeatherServer();
  let databaseUrl: string;
  const services: ServiceProcess[] = [];
  const apps: TestApp[] = [];

  const serviceEnv = () => ({
    DATABASE_URL: databaseUrl,
    DATABASE_CREATE_IF_MISSING: 'false',
    REDIS_URL: redis.url(0),
    KNOWLEDGE_SEED_ON_START: 'false',
    // These tests drive one user through many turns; the budget has its own test.
    RATE_LIMIT_CHAT_PER_MINUTE: '0',
    WEATHER_BASE_URL: weather.url,
    WEATHER_GEOCODING_URL: weather.url,
  });
  const app = async (env: Record<string, string> = {}) => {
    const created = await createTestApp({ ...serviceEnv(), ...env });
    apps.push(created);
    return created;
  };

  beforeAll(async () => {
    await Promise.all([postgres.start(), redis.start(), weather.start()]);
    databaseUrl = await postgres.createDatabase('faults');
    // Migrate once, so the child services start on a ready schema.
    await (await app()).close();
    apps.pop();
  }, 60_000);
  afterEach(async () => {
    weather.release();
    if (!postgres.running) await postgres.start();
    await postgres.resume().catch(() => undefined);
    await redis.resume().catch(() => undefined);
    await Promise.allSettled(services.splice(0).map((service) => service.stop()));
    await Promise.allSettled(apps.splice(0).map((created) => created.close()));
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled([postgres.destroy(), redis.destroy(), weather.stop()]);
  }, 60_000);

  it('a client checked out of either pool survives the server stopping (no unhandled error event)', async () => {
    const t = await app();
    const checkpointClient = await t.app.get(CheckpointerProvider).pool.connect();
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    const ended = new Promise((resolve) => checkpointClient.once('end', resolve));
    await postgres.stop('fast');
    await ended;
    checkpointClient.release(true);
    await runner.release().catch(() => undefined);
    await request(t.app.getHttpServer()).get('/health').expect(503);
    await postgres.start();
    await waitUntil(async () => (await request(t.app.getHttpServer()).get('/health')).status === 200, 'health 200 again', 20_000, 50);
  }, 60_000);

  it('keeps serving (503, then answers) when PostgreSQL stops while it serves turns', async () => {
    const service = await startService(serviceEnv());
    services.push(service);
    const user = uniqueUser('pgstop');
    const token = createTokenFor(user);
    let done = 0;
    let stopping = false;
    const turnLoop = async () => {
      while (!stopping) {
        const res = await readSse(`${service.baseUrl}/api/chat/stream`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ message: 'weather in Paris' }),
        }).catch(() => null);
        if (res?.events.at(-1)?.event === 'done') done += 1;
      }
    };
    const loops = Array.from({ length: 6 }, turnLoop);
    await waitUntil(async () => done >= 12, 'turns served before the stop', 30_000, 20);
    await postgres.stop('fast');
    stopping = true;
    await Promise.all(loops);
    expect(service.hasExited).toBe(false);
    const health = await fetch(`${service.baseUrl}/health`);
    expect(health.status).toBe(503);
    await postgres.start();
    await waitUntil(async () => (await fetch(`${service.baseUrl}/health`)).status === 200, 'health 200 again', 20_000, 50);
    const res = await fetch(`${service.baseUrl}/api/chat`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'weather in Berlin?' }),
    });
    expect(res.status).toBe(200);
    expect(service.output()).not.toMatch(/Unhandled 'error' event/);
  }, 90_000);

  it('a turn in flight during a PostgreSQL stall fails cleanly and says its message was not kept', async () => {
    const t = await app({ DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_LOCK_TIMEOUT_MS: '500' });
    const user = uniqueUser('pgstall');
    weather.hold();
    const inFlight = weather.nextRequest();
    const turn = request(t.app.getHttpServer())
      .post('/api/chat')
      .set(t.auth(user))
      .send({ message: 'weather in Paris' })
      .then((r) => r);
    await inFlight;
    await postgres.pause();
    weather.release();
    // The answer comes while the server is still paused: nothing waits for the stall to end.
    const res = await turn;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('storage_unavailable');
    // It stalls on a checkpoint write, before its own commit: nothing of it can have landed.
    expect(res.body.message).toMatch(/^The database did not answer in time\. Your message was NOT saved/);
    const during = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user));
    expect(during.status).toBe(503);
    await postgres.resume();
    const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(sessions.body.sessions).toHaveLength(1);
    expect(sessions.body.sessions[0].message_count).toBe(0); // as the client was told: not kept
    // The run's end, refused during the stall, is recorded once the database answers: the session is free.
    await waitUntil(
      async () => (await t.dataSource.query(`SELECT status FROM chat_runs WHERE user_id = $1`, [user]))[0]?.status === 'error',
      'the failed run recorded as error',
      20_000,
      50,
    );
    const again = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'weather in Paris', session_id: sessions.body.sessions[0].session_id });
    expect(again.status).toBe(200);
  }, 60_000);

  it('never serves a stale transcript or list across instances when Redis pauses during a write', async () => {
    const writer = await app({ DATABASE_URL: testDatabaseUrl(), CACHE_COMMAND_TIMEOUT_MS: '100' });
    const reader = await app({ DATABASE_URL: testDatabaseUrl(), CACHE_COMMAND_TIMEOUT_MS: '100' });
    const user = uniqueUser('stale');
    const session = randomUUID();
    await writer.storage.appendTurn(user, session, [
      { type: 'human', content: 'one' },
      { type: 'ai', content: 'two' },
    ]);
    const read = async () => (await request(reader.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(reader.auth(user)).expect(200)).body.messages;
    const list = async () => (await request(reader.app.getHttpServer()).get('/api/sessions').set(reader.auth(user)).expect(200)).body.sessions;
    expect(await read()).toHaveLength(2); // now cached in Redis
    expect((await list())[0].message_count).toBe(2);
    await redis.pause();
    await writer.storage.appendTurn(user, session, [
      { type: 'human', content: 'three' },
      { type: 'ai', content: 'four' },
    ]);
    await redis.resume();
    // The writer's invalidation was lost; the reader must still not serve the old copies.
    expect((await read()).map((m: { content: string }) => m.content)).toEqual(['one', 'two', 'three', 'four']);
    expect((await list())[0].message_count).toBe(4);
  }, 60_000);

  it('never caches a copy read before another instance wrote, when its write to Redis arrives late', async () => {
    // The reader's Redis link delivers late: its cache write of what it read lands after the writer's invalidation.
    const link = await new TcpProxy('127.0.0.1', redis.port).start();
    try {
      const writer = await app({ DATABASE_URL: testDatabaseUrl() });
      const reader = await app({ DATABASE_URL: testDatabaseUrl(), REDIS_URL: `redis://127.0.0.1:${link.port}/0`, CACHE_COMMAND_TIMEOUT_MS: '5000' });
      const user = uniqueUser('late-write');
      const session = randomUUID();
      await writer.storage.appendTurn(user, session, [
        { type: 'human', content: 'one' },
        { type: 'ai', content: 'two' },
      ]);
      const server = reader.app.getHttpServer();
      await request(server).get('/health').expect(200); // the reader's Redis connections are open

      link.hold();
      const firstRead = request(server)
        .get(`/api/sessions/${session}/messages`)
        .set(reader.auth(user))
        .then((r) => r);
      await link.waitForHeld(1); // its cache lookup
      link.release();
      link.hold();
      await link.waitForHeld(1); // its cache write of the transcript it read from PostgreSQL
      await writer.storage.appendTurn(user, session, [
        { type: 'human', content: 'three' },
        { type: 'ai', content: 'four' },
      ]);
      link.release();
      expect((await firstRead).status).toBe(200);

      const again = await request(server).get(`/api/sessions/${session}/messages`).set(reader.auth(user)).expect(200);
      expect(again.body.messages.map((m: { content: string }) => m.content)).toEqual(['one', 'two', 'three', 'four']);
    } finally {
      await link.stop();
    }
  }, 60_000);

  /**
   * A turn in flight on the built service (`doomed`, to be killed) waiting on the held weather service,
   * and an in-process instance (`survivor`) on the same PostgreSQL and Redis, both with fast heartbeats.
   */
  async function turnOnDoomedInstance(label: string) {
    const fast = { RUN_HEARTBEAT_MS: '100', RUN_STALE_AFTER_MS: '400' };
    const doomed = await startService({ ...serviceEnv(), ...fast });
    services.push(doomed);
    const survivor = await app(fast);
    const base = await survivor.listen();
    const user = uniqueUser(label);
    weather.hold();
    const inFlight = weather.nextRequest();
    const stream = await openSse(`${doomed.baseUrl}/api/chat/stream`, {
      method: 'POST',
      headers: { ...survivor.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'weather in Berlin?' }),
    });
    const { run_id, session_id } = (await stream.waitFor((e) => e.event === 'metadata')).data;
    await inFlight;
    return { doomed, survivor, base, user, stream, run_id: run_id as string, session_id: session_id as string };
  }

  it('rejoining a run whose instance was killed ends with run_lost, and the session is free again', async () => {
    const { doomed, survivor, base, user, stream, run_id, session_id } = await turnOnDoomedInstance('killed');
    await stream.waitFor((e) => e.event === 'tool');
    doomed.kill('SIGKILL');
    await doomed.exited;
    stream.close();

    const rejoined = await readSse(`${base}/api/chat/runs/${run_id}/stream`, { headers: { ...survivor.auth(user), 'Last-Event-ID': '1' } });
    expect(rejoined.status).toBe(200);
    expect(rejoined.events.map((e) => e.event)).toEqual(['tool', 'error']);
    expect(rejoined.events.at(-1)!.data.code).toBe('run_lost');
    const [{ status }] = await survivor.dataSource.query('SELECT status FROM chat_runs WHERE id = $1', [run_id]);
    expect(status).toBe('abandoned');

    // GET and POST agree: the session exists (its first turn was cut off) and takes a new turn.
    const messages = await request(survivor.app.getHttpServer()).get(`/api/sessions/${session_id}/messages`).set(survivor.auth(user)).expect(200);
    expect(messages.body.messages).toEqual([]);
    weather.release();
    const next = await request(survivor.app.getHttpServer()).post('/api/chat').set(survivor.auth(user)).send({ message: 'weather in Paris', session_id });
    expect(next.status).toBe(200);
  }, 60_000);

  it('a follower on another instance is told run_lost when the run stops heartbeating mid-stream', async () => {
    const { doomed, survivor, base, user, stream, run_id } = await turnOnDoomedInstance('follower');
    const follower = await openSse(`${base}/api/chat/runs/${run_id}/stream`, { headers: survivor.auth(user) });
    await follower.waitFor((e) => e.event === 'tool');
    doomed.kill('SIGKILL');
    await follower.ended;
    expect(follower.events.at(-1)).toMatchObject({ event: 'error', data: { code: 'run_lost' } });
    stream.close();
  }, 60_000);

  it('answers 503 to a rejoin from another instance while Redis is stalled, and shuts down all the same', async () => {
    const runner = await app();
    const other = await app({ CACHE_COMMAND_TIMEOUT_MS: '150' });
    const user = uniqueUser('redis-stall');
    const done = await request(runner.app.getHttpServer()).post('/api/chat/stream').set(runner.auth(user)).send({ message: 'weather in Paris' });
    const runId = /"run_id":"([^"]+)"/.exec(done.text)![1];
    await redis.pause();
    const res = await request(other.app.getHttpServer()).get(`/api/chat/runs/${runId}/stream`).set(other.auth(user)).set('Last-Event-ID', '1');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'run_events_unavailable', message: 'run events cannot be read (the event store did not answer); retry shortly' });
    // Closing does not wait for the stalled Redis either.
    await other.close();
    apps.splice(apps.indexOf(other), 1);
  }, 60_000);
});

function createTokenFor(user: string): string {
  return new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' });
}
