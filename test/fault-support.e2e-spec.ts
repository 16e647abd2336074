import fs from 'node:fs';
import pg from 'pg';
import { OwnPostgres } from './support/own-postgres.js';
import { OwnRedis } from './support/own-redis.js';
import { OwnRedisCluster } from './support/own-redis-cluster.js';
import { redisCommand } from './support/redis-node-process.js';
import { isGone, ServiceProcess, startService, waitUntil } from './support/service-process.js';

/** Self-test of the fault-test support: real servers of our own, stopped, paused and killed under the real service. */
describe('Fault-test support: own PostgreSQL and Redis under the service process', () => {
  const postgres = new OwnPostgres();
  const redis = new OwnRedis();
  let service: ServiceProcess | undefined;

  async function health(): Promise<{ status: number; body: any }> {
    const response = await fetch(`${service!.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: await response.json() };
  }

  async function healthBecomes(status: number, database: 'up' | 'down', cache: 'up' | 'down'): Promise<void> {
    let last: unknown;
    await waitUntil(
      async () => {
        const answer = await health();
        last = answer;
        return answer.status === status && answer.body.details?.database?.status === database && answer.body.details?.cache?.status === cache;
      },
      `/health ${status} (database ${database}, cache ${cache})`,
      10_000,
      25,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last answer ${JSON.stringify(last)}\n${service!.tail()}`);
    });
  }

  beforeAll(async () => {
    await Promise.all([postgres.start(), redis.start()]);
    const databaseUrl = await postgres.createDatabase('fault_support');
    service = await startService({
      DATABASE_URL: databaseUrl,
      DATABASE_CREATE_IF_MISSING: 'false',
      REDIS_URL: redis.url(0),
      KNOWLEDGE_SEED_ON_START: 'false',
    });
  }, 30_000);

  afterAll(async () => {
    await service?.stop();
    await Promise.all([redis.destroy(), postgres.destroy()]);
  });

  it('serves /health through a Redis pause and a PostgreSQL stop and restart', async () => {
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });

    await redis.pause();
    expect(await redis.ping(200)).toBe(false);
    const whilePaused = await health();
    expect(whilePaused).toMatchObject({ status: 200, body: { status: 'degraded', details: { database: { status: 'up' }, cache: { status: 'down' } } } });
    await redis.resume();
    await healthBecomes(200, 'up', 'up');

    await postgres.stop('fast');
    await healthBecomes(503, 'down', 'up');
    expect(service!.hasExited).toBe(false);

    await postgres.restart();
    await healthBecomes(200, 'up', 'up');

    const exit = await service!.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    await service!.waitForLog(/shutdown complete/, 1_000);
  });

  it('pauses, kills and restarts its own PostgreSQL, keeping the data', async () => {
    const url = postgres.url('fault_support');
    const query = async (sql: string) => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500, query_timeout: 500 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return await client.query(sql);
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    await query('CREATE TABLE kept (value text); INSERT INTO kept VALUES ($$before the crash$$)');

    await postgres.pause();
    await expect(query('SELECT 1')).rejects.toThrow();
    await postgres.resume();
    await expect(query('SELECT 1')).resolves.toBeDefined();

    const killed = postgres.pids();
    await postgres.kill9();
    expect(killed.every(isGone)).toBe(true);
    await expect(query('SELECT 1')).rejects.toThrow();

    await postgres.restart();
    expect((await query('SELECT value FROM kept')).rows).toEqual([{ value: 'before the crash' }]);
  });

  it('keeps a commit that a kill -9 follows at once (the fault tests count on acknowledged writes)', async () => {
    const url = postgres.url('fault_support');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    await client.query('CREATE TABLE acknowledged (value text)');
    await client.query(`INSERT INTO acknowledged VALUES ('committed')`);
    await postgres.kill9();
    await client.end().catch(() => undefined);
    await postgres.restart();
    const after = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    await after.connect();
    try {
      expect((await after.query('SELECT value FROM acknowledged')).rows).toEqual([{ value: 'committed' }]);
    } finally {
      await after.end();
    }
  });

  it('makes a streaming replica of it that follows, stays behind while its replay is paused, and catches up', async () => {
    const replica = OwnPostgres.replicaOf(postgres);
    const values = async () => (await replica.query('SELECT value FROM replicated ORDER BY value')).rows.map((row) => row.value as string);
    try {
      await replica.start();
      expect((await replica.query('SELECT pg_is_in_recovery() AS standby')).rows).toEqual([{ standby: true }]);
      await postgres.query(`CREATE TABLE replicated (value text); INSERT INTO replicated VALUES ('first')`);
      await replica.caughtUp();
      expect(await values()).toEqual(['first']);

      await replica.pauseReplay();
      await postgres.query(`INSERT INTO replicated VALUES ('second')`);
      // The replica has the WAL of the insert, and does not apply it.
      const [{ lsn }] = (await postgres.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows;
      await waitUntil(
        async () => (await replica.query('SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn AS received', [lsn])).rows[0].received === true,
        'the replica to receive the insert',
        30_000,
        20,
      );
      expect(await values()).toEqual(['first']);

      await replica.resumeReplay();
      await replica.caughtUp();
      expect(await values()).toEqual(['first', 'second']);
      await expect(replica.query(`INSERT INTO replicated VALUES ('written on the replica')`)).rejects.toThrow(/read-only transaction/);
    } finally {
      await replica.destroy();
    }
    expect(fs.existsSync(replica.dir)).toBe(false);
  });

  it('starts a Redis Cluster of 3 masters that serves every slot, routes keys by their hash tag, and refuses commands across slots', async () => {
    const cluster = new OwnRedisCluster(3);
    try {
      await cluster.start();
      const owners = await Promise.all(['{a}one', '{a}two', '{b}one', '{c}one'].map((key) => cluster.portOf(key)));
      expect(owners[0]).toBe(owners[1]);
      expect(new Set(owners).size).toBeGreaterThan(1);
      const masters = String(await redisCommand(cluster.nodes[0].port, ['CLUSTER', 'NODES']))
        .split('\n')
        .filter((line) => line.includes('master'));
      expect(masters).toHaveLength(3);
      // The same node, one hash tag: one command may name both keys; keys of two slots it refuses (CROSSSLOT).
      expect(await redisCommand(owners[0], ['MSET', '{a}one', '1', '{a}two', '2'])).toBe('OK');
      expect(await redisCommand(owners[0], ['MGET', '{a}one', '{a}two'])).toEqual(['1', '2']);
      expect(await redisCommand(owners[0], ['MGET', '{a}one', '{b}one'])).toBeNull();
      // Two slots of one node are refused together too: one command per slot, not per node.
      const sameNode: string[] = [];
      for (let i = 0; sameNode.length < 2; i += 1) if ((await cluster.portOf(`{k${i}}`)) === owners[0]) sameNode.push(`{k${i}}`);
      const slots = await Promise.all(sameNode.map((key) => redisCommand(owners[0], ['CLUSTER', 'KEYSLOT', key])));
      expect(slots[0]).not.toBe(slots[1]);
      expect(await redisCommand(owners[0], ['MSET', `${sameNode[0]}x`, '1'])).toBe('OK');
      expect(await redisCommand(owners[0], ['MGET', `${sameNode[0]}x`])).toEqual(['1']);
      expect(await redisCommand(owners[0], ['MGET', `${sameNode[0]}x`, `${sameNode[1]}x`])).toBeNull();
    } finally {
      await cluster.destroy();
    }
    expect(cluster.nodes.every((node) => !node.running)).toBe(true);
  });

  it('leaves no process and no directory behind', async () => {
    const postgresPids = postgres.pids();
    const redisPid = redis.pid!;
    expect(postgresPids.length).toBeGreaterThan(1);

    await Promise.all([redis.destroy(), postgres.destroy()]);
    await postgres.destroy(); // idempotent

    expect(postgresPids.every(isGone)).toBe(true);
    expect(isGone(redisPid)).toBe(true);
    expect(fs.existsSync(postgres.dir)).toBe(false);
    expect(await redis.ping(200)).toBe(false);
  });
});
