import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redisCommand, RedisNodeProcess } from './redis-node-process.js';
import { waitUntil } from './service-process.js';

export { redisCommand };

export const SENTINEL_MASTER = 'ragmaster';

/** Debian's redis-sentinel (`.ci/run` installs it); without it, redis-server in sentinel mode, the same program. */
const SENTINEL_BIN = ['/usr/bin/redis-sentinel', '/usr/local/bin/redis-sentinel'].find((candidate) => fs.existsSync(candidate));

/**
 * A Redis master, one replica and three sentinels of the test's own
 * (Debian's redis-server and redis-sentinel), on loopback
 * ports: for tests that kill the master and watch the failover.
 */
export class OwnRedisSentinels {
  readonly master: RedisNodeProcess;
  readonly replica: RedisNodeProcess;
  readonly sentinels: RedisNodeProcess[] = [];
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-sentinel-'));

  constructor() {
    // The master writes an RDB file for the replica's full sync: into the temp directory, not the working one.
    const data = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', this.dir];
    this.master = new RedisNodeProcess((port) => ['--port', String(port), ...data]);
    this.replica = new RedisNodeProcess((port) => ['--port', String(port), ...data, '--replicaof', '127.0.0.1', String(this.master.port)]);
    for (let i = 0; i < 3; i += 1) {
      this.sentinels.push(
        new RedisNodeProcess((port) => {
          const file = path.join(this.dir, `sentinel-${i}.conf`);
          fs.writeFileSync(
            file,
            [
              `port ${port}`,
              'bind 127.0.0.1',
              `dir ${this.dir}`,
              `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${this.master.port} 2`,
              `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
              // A failover attempt that fails (a split vote, a sentinel in TILT on a loaded machine) is tried again after twice this.
              `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
              `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
              '',
            ].join('\n'),
          );
          return SENTINEL_BIN ? [file] : [file, '--sentinel'];
        }, SENTINEL_BIN ?? 'redis-server'),
      );
    }
  }

  /** `host:port,…` of the sentinels, for REDIS_SENTINELS. */
  get addresses(): string {
    return this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',');
  }

  /** Starts the master, the replica (waiting until it is in sync) and the sentinels (waiting until each knows the replica and the others). */
  async start(): Promise<this> {
    await this.master.start();
    await this.replica.start();
    await waitUntil(async () => /master_link_status:up/.test(String(await redisCommand(this.replica.port, ['INFO', 'replication']))), 'the replica to sync', 20_000, 20);
    for (const sentinel of this.sentinels) await sentinel.start();
    await waitUntil(
      async () => {
        for (const sentinel of this.sentinels) {
          const replicas = await redisCommand(sentinel.port, ['SENTINEL', 'REPLICAS', SENTINEL_MASTER]);
          const others = await redisCommand(sentinel.port, ['SENTINEL', 'SENTINELS', SENTINEL_MASTER]);
          if (!JSON.stringify(replicas).includes(`"${this.replica.port}"`) || !Array.isArray(others) || others.length < 2) return false;
        }
        return true;
      },
      'the sentinels to know the replica and each other',
      30_000,
      50,
    );
    return this;
  }

  /** The port of the master the sentinels name now. */
  async masterPort(): Promise<number> {
    const reply = await redisCommand(this.sentinels[0].port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER]);
    return Array.isArray(reply) ? Number(reply[1]) : 0;
  }

  /** The sentinels' and the replica's last log lines, for a failover that did not happen. */
  logs(): string {
    const nodes = [...this.sentinels.map((sentinel, i): [string, RedisNodeProcess] => [`sentinel ${i}`, sentinel]), ['replica', this.replica] as const];
    return nodes.map(([name, node]) => `--- ${name} ---\n${node.output.slice(-3000)}`).join('\n');
  }

  async destroy(): Promise<void> {
    await Promise.all([...this.sentinels, this.replica, this.master].map((node) => node.stop().catch(() => undefined)));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
