import path from 'node:path';
import { JwtService } from '@nestjs/jwt';
import pg from 'pg';
import request from 'supertest';
import { adminBearer } from './support/admin.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { OwnRedisSentinels, redisCommand, SENTINEL_MASTER } from './support/own-redis-sentinel.js';
import { openSse, readSse } from './support/sse-client.js';
import { ServiceProcess, startService, waitUntil } from './support/service-process.js';
import { uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET, TEST_PG_SERVER } from './support/test-env.js';

const bearer = (user: string) => ({ Authorization: `Bearer ${new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' })}` });
const json = (auth: Record<string, string>) => ({ ...auth, 'Content-Type': 'application/json' });

type Message = { type: string; content: string };
const messagesOf = (body: unknown) => (Array.isArray(body) ? body : (body as { messages: Message[] }).messages) as Message[];

/**
 * Redis Sentinel: a master, a replica and three sentinels of the test's own,
 * two instances of the built service finding the master through the
 * sentinels; the master is killed (SIGKILL) while a turn runs.
 */
describe('Redis Sentinel: two instances follow the master through a failover', () => {
  const redis = new OwnRedisSentinels();
  const weather = new FakeWeatherServer();
  const database = `rag_chat_sentinel_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  let a: ServiceProcess;
  let b: ServiceProcess;
  const adminAuth = adminBearer();

  beforeAll(async () => {
    await Promise.all([redis.start(), weather.start(), admin.connect()]);
    await admin.query(`CREATE DATABASE "${database}"`);
    const env = {
      DATABASE_URL: `${TEST_PG_SERVER}/${database}`,
      REDIS_SENTINELS: redis.addresses,
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
      WEATHER_BASE_URL: weather.url,
      WEATHER_GEOCODING_URL: weather.url,
      KNOWLEDGE_CORPUS_DIR: path.resolve('corpus'),
      KNOWLEDGE_INGEST_LOCK_MS: '2000',
      WEB_CLIENT_ENABLED: 'false',
    };
    a = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
    b = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    weather.release();
    await Promise.all([a?.stop(), b?.stop()]);
    await redis.destroy();
    await weather.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  /** A streamed turn on `on`, then its stream rejoined from the start on `other`: the events, or null when the rejoin did not give them all. */
  /** A turn held in a tool on `on`, cancelled through `other`: the cancel crosses instances through Redis. */
  const cancelAcross = async (on: ServiceProcess, other: ServiceProcess, user: string) => {
    const held = await heldWeatherTurn(on.baseUrl, bearer(user), weather);
    try {
      await request(other.baseUrl).post(`/api/chat/runs/${held.runId}/cancel`).set(bearer(user)).expect(200);
      expect((await held.stream.waitFor((event) => event.event === 'error')).data).toMatchObject({ code: 'cancelled' });
    } finally {
      weather.release();
      held.stream.close();
    }
  };
  const streamedAndRejoined = async (on: ServiceProcess, other: ServiceProcess, user: string, message: string) => {
    const streamed = await readSse(`${on.baseUrl}/api/chat/stream`, { method: 'POST', headers: json(bearer(user)), body: JSON.stringify({ message }) });
    if (streamed.status !== 200 || streamed.events.at(-1)?.event !== 'done') return { streamed, rejoined: null };
    const runId = streamed.events[0].data.run_id as string;
    const rejoined = await readSse(`${other.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...bearer(user), 'Last-Event-ID': '0' } });
    return { streamed, rejoined: rejoined.status === 200 ? rejoined.events : null };
  };

  it('reaches the master through the sentinels: streamed turns rejoined on the other instance, a cancel across them, an ingest job', async () => {
    const user = uniqueUser('sentinel');
    const { streamed, rejoined } = await streamedAndRejoined(a, b, user, 'How long is the Aurora X2 warranty?');
    expect(rejoined).toEqual(streamed.events);
    // Both instances listen for cancels on the master; the events are on it.
    expect(await redisCommand(redis.master.port, ['PUBSUB', 'NUMSUB', 'chat_run_cancel'])).toEqual(['chat_run_cancel', 2]);
    expect(await redisCommand(redis.master.port, ['EXISTS', `chat_run_events:${streamed.events[0].data.run_id}`])).toBe(1);

    await cancelAcross(a, b, user);

    const upload = await request(a.baseUrl)
      .post('/api/knowledge/documents?wait=true')
      .set(adminAuth)
      .attach('file', Buffer.from('# Lantern\n\nThe Quokka-7 lantern runs 41 hours.\n'), 'quokka-7.md');
    expect(upload.status).toBe(201);
    // The cache, the rate limits and the ingest queue are on the master too. A cache write that outlasts
    // CACHE_COMMAND_TIMEOUT_MS (a loaded machine) is given up, so the transcript is read until it is cached.
    let keys = '';
    await waitUntil(
      async () => {
        await request(b.baseUrl).get(`/api/sessions/${streamed.events[0].data.session_id}/messages`).set(bearer(user)).expect(200);
        keys = JSON.stringify(await redisCommand(redis.master.port, ['KEYS', '*']));
        return keys.includes('chat_messages:');
      },
      'the transcript to be cached on the master',
      30_000,
      50,
    );
    expect(keys).toMatch(/rate_limit:chat:/);
    expect(keys).toMatch(/chat_messages:/);
    expect(keys).toMatch(/rag:ingest-/);
    // Nothing went wrong finding the master. A command or connection that outlasted its timeout on a loaded
    // machine is degraded around (the cache serves from PostgreSQL, the queue waits), not a Sentinel fault.
    const loadTimeout = /took longer than \d+ ms|connect ETIMEDOUT/;
    for (const service of [a, b]) expect(service.messages(40).filter((line) => !line.startsWith('JWT_SECRET') && !loadTimeout.test(line))).toEqual([]);
  });

  it('loses no acknowledged message when the master is killed mid-run: followers get a complete prefix, new turns and rejoins work after the failover, the job completes', async () => {
    const user = uniqueUser('failover');
    const before = await request(a.baseUrl).post('/api/chat').set(bearer(user)).send({ message: 'How do I reset the Aurora X1?' }).expect(200);
    const session = before.body.session_id as string;

    // A turn held in a tool on A, followed from B; an upload queued just before the kill.
    const held = await heldWeatherTurn(a.baseUrl, bearer(user), weather);
    const follower = await openSse(`${b.baseUrl}/api/chat/runs/${held.runId}/stream`, { headers: { ...bearer(user), 'Last-Event-ID': '0' } });
    const upload = await request(b.baseUrl)
      .post('/api/knowledge/documents')
      .set(adminAuth)
      .attach('file', Buffer.from('# Lamp\n\nThe Quokka-9 lamp runs 63 hours.\n'), 'quokka-9.md');
    expect(upload.status).toBe(202);
    const oldMaster = redis.master.port;

    await redis.master.kill9();
    const killedAt = performance.now();
    weather.release();
    const done = await held.stream.waitFor((event) => event.event === 'done' || event.event === 'error');
    expect(done.event).toBe('done'); // the run itself never needed Redis to finish
    held.stream.close();

    // The follower: a complete prefix, ended by `done` or by an error that says events were lost; never a gap.
    const followed = await follower.waitFor((event) => event.event === 'done' || event.event === 'error');
    follower.close();
    const ids = follower.events.map((event) => Number(event.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    if (followed.event === 'error') expect(['events_incomplete', 'run_lost']).toContain(followed.data.code);

    await waitUntil(async () => (await redis.masterPort()) === redis.replica.port, 'the sentinels to promote the replica', 60_000, 50).catch((error: Error) => {
      throw new Error(`${error.message}\n${redis.logs()}`);
    });
    expect(await redis.masterPort()).not.toBe(oldMaster);

    // Recovered: a streamed turn on one instance is rejoined whole on the other, both ways.
    let recovered: Awaited<ReturnType<typeof streamedAndRejoined>> | undefined;
    await waitUntil(
      async () => {
        recovered = await streamedAndRejoined(a, b, user, 'How long is the Aurora X2 warranty?');
        return recovered.rejoined !== null && JSON.stringify(recovered.rejoined) === JSON.stringify(recovered.streamed.events);
      },
      'a streamed turn on A to be rejoined on B after the failover',
      60_000,
      50,
    );
    const recoveryMs = performance.now() - killedAt;
    const other = await streamedAndRejoined(b, a, user, '会员积分多久过期？');
    expect(other.rejoined).toEqual(other.streamed.events);
    expect(await redisCommand(redis.replica.port, ['EXISTS', `chat_run_events:${other.streamed.events[0].data.run_id}`])).toBe(1);
    // Both listen for cancels on the new master, and a cancel across instances reaches the run at once.
    await waitUntil(
      async () => JSON.stringify(await redisCommand(redis.replica.port, ['PUBSUB', 'NUMSUB', 'chat_run_cancel'])) === '["chat_run_cancel",2]',
      'both instances to subscribe on the new master',
      30_000,
      50,
    );
    await cancelAcross(b, a, user);
    console.log(`Redis Sentinel failover: the master was killed; a streamed turn was rejoined on the other instance ${Math.round(recoveryMs)} ms later`);

    // New turns on both instances, in the session from before the kill.
    await request(a.baseUrl).post('/api/chat').set(bearer(user)).send({ message: '退货政策是什么？', session_id: session }).expect(200);
    await request(b.baseUrl).post('/api/chat').set(bearer(user)).send({ message: 'What is the hotel limit in London?', session_id: session }).expect(200);

    // The job queued before the kill completes (queued again from PostgreSQL if the new master never had it).
    let status = '';
    await waitUntil(
      async () => {
        status = (await request(a.baseUrl).get(`/api/knowledge/jobs/${upload.body.job.id}`).set(adminAuth)).body.status;
        return status === 'completed' || status === 'failed';
      },
      'the ingest job to finish',
      60_000,
      50,
    );
    expect(status).toBe('completed');

    // Every acknowledged message reads back once.
    const transcript = messagesOf((await request(b.baseUrl).get(`/api/sessions/${session}/messages`).set(bearer(user)).expect(200)).body);
    const humans = transcript.filter((message) => message.type === 'human').map((message) => message.content);
    expect(humans).toEqual(['How do I reset the Aurora X1?', '退货政策是什么？', 'What is the hotel limit in London?']);
    expect(transcript).toHaveLength(6);
    const heldSession = messagesOf((await request(a.baseUrl).get(`/api/sessions/${held.sessionId}/messages`).set(bearer(user)).expect(200)).body);
    expect(heldSession.map((message) => message.type)).toEqual(['human', 'ai']);
    expect(heldSession[1].content).toBe(done.data.response);
  });
});
