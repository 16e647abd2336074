import path from 'node:path';
import { JwtService } from '@nestjs/jwt';
import pg from 'pg';
import request from 'supertest';
import { RUN_EVENT_TAIL_CLIENT } from '../src/chat/run-event-tail.js';
import { RedisKeys, userHashTag } from '../src/common/redis-keys.js';
import { messagesCacheKey, sessionsCacheKey } from '../src/session/session-cache-keys.js';
import { adminBearer } from './support/admin.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { OwnRedisCluster } from './support/own-redis-cluster.js';
import { redisCommand } from './support/redis-node-process.js';
import { LiveSse, openSse, readSse } from './support/sse-client.js';
import { ServiceProcess, startService, waitUntil } from './support/service-process.js';
import { uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET, TEST_PG_SERVER } from './support/test-env.js';

const bearer = (user: string) => ({ Authorization: `Bearer ${new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' })}` });
const json = (auth: Record<string, string>) => ({ ...auth, 'Content-Type': 'application/json' });
const SHARDS = 3;
const keys = new RedisKeys({ cluster: { runShards: SHARDS } });

/** The follower tails' connections of a node blocked in XREAD (BullMQ's queue events block in XREAD too). */
async function blockedReads(port: number): Promise<number> {
  const clients = String(await redisCommand(port, ['CLIENT', 'LIST']));
  return clients.split('\n').filter((line) => line.includes(`name=${RUN_EVENT_TAIL_CLIENT} `) && /\bcmd=xread\b/.test(line) && /\bflags=\S*b/.test(line)).length;
}

/**
 * Redis Cluster: three masters of the test's own (Debian's redis-server in
 * cluster mode), two instances of the built service discovering the cluster
 * through REDIS_CLUSTER_NODES.
 */
/**
 * The service's settings on a cluster: one node to discover it from, and a
 * heartbeat too slow to stop a cancelled run within a test, so that a cancel
 * across instances is seen to travel through the cluster's sharded pub/sub.
 */
function clusterEnv(database: string, rootNode: number, weather: FakeWeatherServer): Record<string, string> {
  return {
    DATABASE_URL: `${TEST_PG_SERVER}/${database}`,
    REDIS_CLUSTER_NODES: `127.0.0.1:${rootNode}`,
    REDIS_CLUSTER_RUN_SHARDS: String(SHARDS),
    RUN_HEARTBEAT_MS: '600000',
    RUN_STALE_AFTER_MS: '1800000',
    WEATHER_BASE_URL: weather.url,
    WEATHER_GEOCODING_URL: weather.url,
    KNOWLEDGE_CORPUS_DIR: path.resolve('corpus'),
    WEB_CLIENT_ENABLED: 'false',
  };
}

/** A user id an identity provider may send: braces that, used raw in a key, would make a hash tag of their own. */
const hostileUser = (prefix: string) => `}{${uniqueUser(prefix)}{}`;

describe('Redis Cluster: two instances on a 3-master cluster', () => {
  const cluster = new OwnRedisCluster(3);
  const weather = new FakeWeatherServer();
  const database = `rag_chat_cluster_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  let a: ServiceProcess;
  let b: ServiceProcess;
  const adminAuth = adminBearer();

  beforeAll(async () => {
    await Promise.all([cluster.start(), weather.start(), admin.connect()]);
    await admin.query(`CREATE DATABASE "${database}"`);
    const env = clusterEnv(database, cluster.nodes[1].port, weather);
    a = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
    b = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    weather.release();
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster.destroy();
    await weather.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  const warnings = (service: ServiceProcess) => service.messages(40).filter((line) => !line.startsWith('JWT_SECRET'));

  it('spreads the run shards over the masters, one shard tag each', async () => {
    const owners = await Promise.all(Array.from({ length: SHARDS }, (_, shard) => cluster.portOf(keys.runCancel(shard))));
    expect(new Set(owners).size).toBe(3);
    for (let shard = 0; shard < SHARDS; shard += 1) {
      expect(await cluster.portOf(keys.tailWake(shard, 'any-instance'))).toBe(owners[shard]);
    }
  });

  it('follows runs of every shard live on the other instance with one blocking read per node, whatever the number of followers', async () => {
    // Turns held in the weather tool on A until runs of every shard are running.
    const held: Array<Awaited<ReturnType<typeof heldWeatherTurn>> & { user: string }> = [];
    const shards = new Set<number>();
    while (shards.size < SHARDS) {
      expect(held.length).toBeLessThan(40);
      const user = hostileUser('cluster-follow');
      const turn = await heldWeatherTurn(a.baseUrl, bearer(user), weather);
      held.push({ ...turn, user });
      shards.add(keys.runShard(turn.runId));
    }
    const followers: Array<{ turn: (typeof held)[number]; stream: LiveSse }> = [];
    try {
      // Three followers per run on B, each caught up (the run's first events) before the next check.
      for (const turn of held) {
        const auth = bearer(turn.user);
        for (let i = 0; i < 3; i += 1) {
          const stream = await openSse(`${b.baseUrl}/api/chat/runs/${turn.runId}/stream`, { headers: { ...auth, 'Last-Event-ID': '0' } });
          await stream.waitFor((event) => event.event === 'metadata');
          followers.push({ turn, stream });
        }
      }
      // Each master holds one read blocked for B's tail (A follows nothing from Redis); none for the followers themselves.
      await waitUntil(
        async () => {
          const counts = await Promise.all(cluster.nodes.map((node) => blockedReads(node.port)));
          return counts.every((count) => count === 1);
        },
        'one blocked XREAD on every master',
        30_000,
        20,
      );
      expect(followers.length).toBe(held.length * 3);
    } finally {
      weather.release();
    }
    for (const turn of held) {
      const done = await turn.stream.waitFor((event) => event.event === 'done' || event.event === 'error');
      expect(done.event).toBe('done');
      turn.stream.close();
    }
    for (const { turn, stream } of followers) {
      await stream.waitFor((event) => event.event === 'done' || event.event === 'error');
      stream.close();
      expect(stream.events.map((event) => [event.id, event.event, event.data])).toEqual(turn.stream.events.map((event) => [event.id, event.event, event.data]));
    }
    // Each run's stream is on the master its shard tag names.
    for (const turn of held) {
      const key = keys.runEvents(turn.runId);
      expect(key).toMatch(/^chat_run_events:\{rs\d+\}:/);
      expect(await redisCommand(await cluster.portOf(key), ['EXISTS', key])).toBe(1);
    }
    expect(warnings(a)).toEqual([]);
    expect(warnings(b)).toEqual([]);
  });

  it('rejoins a streamed turn on the other instance, cancels across instances through sharded pub/sub, and keeps a user’s cache entries on one slot', async () => {
    const user = hostileUser('cluster');
    const streamed = await readSse(`${a.baseUrl}/api/chat/stream`, {
      method: 'POST',
      headers: json(bearer(user)),
      body: JSON.stringify({ message: 'How long is the Aurora X2 warranty?' }),
    });
    expect(streamed.events.at(-1)?.event).toBe('done');
    const runId = streamed.events[0].data.run_id as string;
    const sessionId = streamed.events[0].data.session_id as string;
    const rejoined = await readSse(`${b.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...bearer(user), 'Last-Event-ID': '0' } });
    expect(rejoined.events).toEqual(streamed.events);

    // Both instances listen on every shard's cancel channel, each on the master of its tag.
    for (let shard = 0; shard < SHARDS; shard += 1) {
      const channel = keys.runCancel(shard);
      expect(await redisCommand(await cluster.portOf(channel), ['PUBSUB', 'SHARDNUMSUB', channel])).toEqual([channel, 2]);
    }
    const held = await heldWeatherTurn(a.baseUrl, bearer(user), weather);
    try {
      await request(b.baseUrl).post(`/api/chat/runs/${held.runId}/cancel`).set(bearer(user)).expect(200);
      expect((await held.stream.waitFor((event) => event.event === 'error')).data).toMatchObject({ code: 'cancelled' });
    } finally {
      weather.release();
      held.stream.close();
    }

    // The user's transcript and list are cached on B, both under the user's hash tag; the rate-limit counter is kept.
    await request(b.baseUrl).get(`/api/sessions/${sessionId}/messages`).set(bearer(user)).expect(200);
    await request(b.baseUrl).get('/api/sessions').set(bearer(user)).expect(200);
    const userNode = await cluster.portOf(sessionsCacheKey(user));
    expect(await cluster.portOf(messagesCacheKey(user, sessionId))).toBe(userNode);
    expect(await redisCommand(userNode, ['EXISTS', sessionsCacheKey(user), messagesCacheKey(user, sessionId)])).toBe(2);
    const limiterKey = `rate_limit:chat:${userHashTag(user)}`;
    expect(await redisCommand(await cluster.portOf(limiterKey), ['EXISTS', limiterKey])).toBe(1);

    // A new turn on A invalidates both entries (keys of one slot), and B reads the new transcript.
    await request(a.baseUrl).post('/api/chat').set(bearer(user)).send({ message: '会员积分多久过期？', session_id: sessionId }).expect(200);
    expect(await redisCommand(userNode, ['EXISTS', sessionsCacheKey(user), messagesCacheKey(user, sessionId)])).toBe(0);
    const transcript = await request(b.baseUrl).get(`/api/sessions/${sessionId}/messages`).set(bearer(user)).expect(200);
    expect(JSON.stringify(transcript.body)).toContain('会员积分多久过期？');
    expect(warnings(a)).toEqual([]);
    expect(warnings(b)).toEqual([]);
  });

  it('runs ingest jobs through BullMQ under the {rag} hash tag: queued on one instance, searchable from the other', async () => {
    const upload = await request(a.baseUrl)
      .post('/api/knowledge/documents')
      .set(adminAuth)
      .attach('file', Buffer.from('# Quokka-7 lantern\n\nThe Quokka-7 lantern runs 41 hours on one charge.\n'), 'quokka-7.md');
    expect(upload.status).toBe(202);
    let job: { status: string };
    do {
      job = (await request(b.baseUrl).get(`/api/knowledge/jobs/${upload.body.job.id}`).set(adminAuth).expect(200)).body;
    } while (!['completed', 'failed', 'cancelled'].includes(job.status));
    expect(job.status).toBe('completed');
    const search = await request(b.baseUrl).post('/api/knowledge/search').set(adminAuth).send({ query: 'How long does the Quokka-7 lantern run?', top_k: 3 }).expect(200);
    expect((search.body.chunks as Array<{ text: string }>).map((chunk) => chunk.text).join('\n')).toContain('41 hours');
    const queueNode = await cluster.portOf('{rag}');
    const queueKeys = (await redisCommand(queueNode, ['KEYS', '{rag}:*'])) as string[];
    expect(queueKeys.some((key) => key.startsWith('{rag}:ingest-'))).toBe(true);
    for (const node of cluster.nodes.filter((node) => node.port !== queueNode)) {
      expect(await redisCommand(node.port, ['KEYS', '*rag*'])).toEqual([]);
    }
    expect(warnings(a)).toEqual([]);
    expect(warnings(b)).toEqual([]);
  });

  it('degrades while a master is down and recovers once it is back: turns keep working, then rejoins, cancels and the cache work again on every shard', async () => {
    const user = hostileUser('cluster-fault');
    const before = await request(a.baseUrl).post('/api/chat').set(bearer(user)).send({ message: 'How do I reset the Aurora X1?' }).expect(200);
    const sessionId = before.body.session_id as string;
    const victim = cluster.nodes[0];
    await victim.kill9();
    await waitUntil(
      async () => /cluster_state:fail/.test(String(await redisCommand(cluster.nodes[1].port, ['CLUSTER', 'INFO']))),
      'the cluster to notice the master is gone',
      30_000,
      20,
    );

    // Without the cluster: turns on both instances succeed (events are not kept, the cache and the limits fall back).
    await request(a.baseUrl).post('/api/chat').set(bearer(user)).send({ message: '退货政策是什么？', session_id: sessionId }).expect(200);
    const streamed = await readSse(`${b.baseUrl}/api/chat/stream`, {
      method: 'POST',
      headers: json(bearer(user)),
      body: JSON.stringify({ message: 'How long is the Aurora X2 warranty?', session_id: sessionId }),
    });
    expect(streamed.events.at(-1)?.event).toBe('done');
    const during = await request(a.baseUrl).get(`/api/sessions/${sessionId}/messages`).set(bearer(user)).expect(200);
    expect(JSON.stringify(during.body)).toContain('How long is the Aurora X2 warranty?');

    await victim.start({ restart: true });
    await waitUntil(
      async () => {
        for (const node of cluster.nodes) if (!/cluster_state:ok/.test(String(await redisCommand(node.port, ['CLUSTER', 'INFO'])))) return false;
        return true;
      },
      'the cluster to be whole again',
      30_000,
      20,
    );

    // Recovered: streamed turns of every shard rejoined whole on the other instance.
    const rejoinedShards = new Set<number>();
    await waitUntil(
      async () => {
        const turn = await readSse(`${a.baseUrl}/api/chat/stream`, {
          method: 'POST',
          headers: json(bearer(user)),
          body: JSON.stringify({ message: 'What is the hotel limit in London?', session_id: sessionId }),
        });
        if (turn.events.at(-1)?.event !== 'done') return false;
        const runId = turn.events[0].data.run_id as string;
        const rejoined = await readSse(`${b.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...bearer(user), 'Last-Event-ID': '0' } });
        if (rejoined.status === 200 && JSON.stringify(rejoined.events) === JSON.stringify(turn.events)) rejoinedShards.add(keys.runShard(runId));
        return rejoinedShards.size === SHARDS;
      },
      'streamed turns of every shard to be rejoined on the other instance',
      120_000,
      20,
    );
    // Both instances listen for cancels on the restarted master again, and a cancel of a run in its shard crosses instances.
    const victimShards = [];
    for (let shard = 0; shard < SHARDS; shard += 1) if ((await cluster.portOf(keys.runCancel(shard))) === victim.port) victimShards.push(shard);
    expect(victimShards).toHaveLength(1);
    const channel = keys.runCancel(victimShards[0]);
    await waitUntil(
      async () => JSON.stringify(await redisCommand(victim.port, ['PUBSUB', 'SHARDNUMSUB', channel])) === JSON.stringify([channel, 2]),
      'both instances to listen on the restarted master',
      30_000,
      20,
    );
    const canceller = hostileUser('cluster-cancel');
    let held: Awaited<ReturnType<typeof heldWeatherTurn>> | undefined;
    const others: Array<Awaited<ReturnType<typeof heldWeatherTurn>>> = [];
    try {
      while (!held) {
        expect(others.length).toBeLessThan(40);
        const turn = await heldWeatherTurn(a.baseUrl, bearer(canceller), weather);
        if (keys.runShard(turn.runId) === victimShards[0]) held = turn;
        else others.push(turn);
      }
      await request(b.baseUrl).post(`/api/chat/runs/${held.runId}/cancel`).set(bearer(canceller)).expect(200);
      expect((await held.stream.waitFor((event) => event.event === 'error')).data).toMatchObject({ code: 'cancelled' });
    } finally {
      weather.release();
      held?.stream.close();
      for (const turn of others) turn.stream.close();
    }

    // The cache is used again: the user's list is cached once read.
    await waitUntil(
      async () => {
        await request(b.baseUrl).get('/api/sessions').set(bearer(user)).expect(200);
        return (await redisCommand(await cluster.portOf(sessionsCacheKey(user)), ['EXISTS', sessionsCacheKey(user)])) === 1;
      },
      'the session list to be cached again',
      30_000,
      50,
    );
    const transcript = await request(b.baseUrl).get(`/api/sessions/${sessionId}/messages`).set(bearer(user)).expect(200);
    const humans = (transcript.body.messages as Array<{ type: string; content: string }>).filter((message) => message.type === 'human').map((message) => message.content);
    expect(humans.slice(0, 3)).toEqual(['How do I reset the Aurora X1?', '退货政策是什么？', 'How long is the Aurora X2 warranty?']);
    for (const service of [a, b]) expect((await request(service.baseUrl).get('/health').expect(200)).body).toMatchObject({ details: { cache: { status: 'up' } } });
  });
});

/**
 * A failover: three masters with a replica each; the master the instances
 * were told to discover the cluster from is killed (SIGKILL), its replica is
 * promoted by the cluster, and the instances carry on with the new master.
 */
describe('Redis Cluster: a master killed, its replica promoted', () => {
  const cluster = new OwnRedisCluster(3, 1);
  const weather = new FakeWeatherServer();
  const database = `rag_chat_cluster_failover_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  let a: ServiceProcess;
  let b: ServiceProcess;
  let victimPort = 0;

  beforeAll(async () => {
    await Promise.all([cluster.start(), weather.start(), admin.connect()]);
    await admin.query(`CREATE DATABASE "${database}"`);
    // The master of shard 0's tag: the instances know the cluster only through it.
    victimPort = await cluster.portOf(keys.runCancel(0));
    const env = clusterEnv(database, victimPort, weather);
    a = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
    b = await startService(env, { unset: ['REDIS_URL'], startupTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    weather.release();
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster.destroy();
    await weather.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  /** A streamed turn on A whose run is in `shard`, rejoined whole on B; false when either failed. */
  const rejoinedInShard = async (user: string, shard: number): Promise<boolean> => {
    for (;;) {
      const turn = await readSse(`${a.baseUrl}/api/chat/stream`, {
        method: 'POST',
        headers: json(bearer(user)),
        body: JSON.stringify({ message: 'How long is the Aurora X2 warranty?' }),
      });
      if (turn.events.at(-1)?.event !== 'done') return false;
      const runId = turn.events[0].data.run_id as string;
      if (keys.runShard(runId) !== shard) continue;
      const rejoined = await readSse(`${b.baseUrl}/api/chat/runs/${runId}/stream`, { headers: { ...bearer(user), 'Last-Event-ID': '0' } });
      return rejoined.status === 200 && JSON.stringify(rejoined.events) === JSON.stringify(turn.events);
    }
  };

  it('follows the promoted replica: rejoins, cancels through sharded pub/sub, the cache and the limits of the failed shard work again', async () => {
    const user = hostileUser('failover');
    expect(await rejoinedInShard(user, 0)).toBe(true);
    // A user whose cache entries and counter are on the master that will die.
    let cached = hostileUser('failover-cache');
    while ((await cluster.portOf(sessionsCacheKey(cached))) !== victimPort) cached = hostileUser('failover-cache');
    const victim = cluster.nodes.find((node) => node.port === victimPort)!;
    const tagSlot = Number(await redisCommand(cluster.nodes.find((node) => node !== victim)!.port, ['CLUSTER', 'KEYSLOT', keys.runCancel(0)]));

    await victim.kill9();
    const killedAt = performance.now();
    await waitUntil(
      async () => {
        const master = await cluster.masterOfSlot(tagSlot);
        if (master === null || master === victimPort) return false;
        return /cluster_state:ok/.test(String(await redisCommand(master, ['CLUSTER', 'INFO'])));
      },
      'the replica to be promoted',
      60_000,
      50,
    );
    const promoted = (await cluster.masterOfSlot(tagSlot))!;

    // Runs of the failed shard are rejoined on the other instance again: their streams are on the promoted replica.
    await waitUntil(() => rejoinedInShard(user, 0), 'a run of the failed shard to be rejoined on the other instance', 60_000, 50);
    console.log(`Redis Cluster failover: the master was killed; a run of its shard was rejoined on the other instance ${Math.round(performance.now() - killedAt)} ms later`);

    // Both instances listen on the promoted master, and a cancel of a run in that shard crosses instances.
    const channel = keys.runCancel(0);
    await waitUntil(
      async () => JSON.stringify(await redisCommand(promoted, ['PUBSUB', 'SHARDNUMSUB', channel])) === JSON.stringify([channel, 2]),
      'both instances to listen on the promoted master',
      30_000,
      20,
    );
    const canceller = hostileUser('failover-cancel');
    let held: Awaited<ReturnType<typeof heldWeatherTurn>> | undefined;
    const others: Array<Awaited<ReturnType<typeof heldWeatherTurn>>> = [];
    try {
      while (!held) {
        expect(others.length).toBeLessThan(40);
        const turn = await heldWeatherTurn(a.baseUrl, bearer(canceller), weather);
        if (keys.runShard(turn.runId) === 0) held = turn;
        else others.push(turn);
      }
      await request(b.baseUrl).post(`/api/chat/runs/${held.runId}/cancel`).set(bearer(canceller)).expect(200);
      expect((await held.stream.waitFor((event) => event.event === 'error')).data).toMatchObject({ code: 'cancelled' });
    } finally {
      weather.release();
      held?.stream.close();
      for (const turn of others) turn.stream.close();
    }

    // The cache and the rate-limit counter of a user on the failed shard are kept on the promoted master (the
    // transcript: an instance keeps recent session lists in its memory too, and does not write them to Redis again).
    const turn = await request(b.baseUrl).post('/api/chat').set(bearer(cached)).send({ message: 'How do I reset the Aurora X1?' }).expect(200);
    const transcriptKey = messagesCacheKey(cached, turn.body.session_id as string);
    await waitUntil(
      async () => {
        await request(b.baseUrl).get(`/api/sessions/${turn.body.session_id}/messages`).set(bearer(cached)).expect(200);
        return (await redisCommand(promoted, ['EXISTS', transcriptKey])) === 1;
      },
      'the transcript of a user of the failed shard to be cached again',
      30_000,
      50,
    );
    const limiterKey = `rate_limit:chat:${userHashTag(cached)}`;
    await waitUntil(
      async () => {
        // 200, or 429 once the budget is spent: either way the counter is asked.
        expect([200, 429]).toContain((await request(b.baseUrl).post('/api/chat').set(bearer(cached)).send({ message: 'Hi' })).status);
        return (await redisCommand(promoted, ['EXISTS', limiterKey])) === 1;
      },
      'the rate-limit counter of a user of the failed shard to be kept again',
      30_000,
      200,
    );
    // An upload after the failover is queued through BullMQ and completes (the queue's {rag} keys may have been on the dead master).
    let upload: request.Response | undefined;
    await waitUntil(
      async () => {
        upload = await request(a.baseUrl)
          .post('/api/knowledge/documents?wait=true')
          .set(adminBearer())
          .attach('file', Buffer.from(`# Quokka lamp\n\nThe Quokka-${Date.now()} lamp runs 63 hours.\n`), `quokka-${Date.now()}.md`);
        return upload.status === 201;
      },
      'an upload to complete through the queue',
      60_000,
      200,
    );
    expect(upload!.body.job).toMatchObject({ status: 'completed' });
    for (const service of [a, b]) expect((await request(service.baseUrl).get('/health').expect(200)).body).toMatchObject({ details: { cache: { status: 'up' } } });
  });
});
