import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { redisCommand, RedisNodeProcess } from './redis-node-process.js';
import { freePort, waitUntil } from './service-process.js';

const run = promisify(execFile);

/**
 * A Redis Cluster of the test's own: `masters` redis-server processes
 * (Debian's) in cluster mode on loopback ports, each with its bus on a port
 * of its own (`cluster-port`), joined by `redis-cli --cluster create` with
 * no replicas. Resolves `start()` once every node reports the cluster ok with
 * every slot served.
 */
export class OwnRedisCluster {
  readonly nodes: RedisNodeProcess[] = [];
  private readonly busPorts: number[] = [];
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-cluster-'));

  constructor(masters = 3) {
    for (let i = 0; i < masters; i += 1) {
      const dir = path.join(this.dir, `node-${i}`);
      fs.mkdirSync(dir);
      this.nodes.push(
        new RedisNodeProcess((port) => [
          '--port',
          String(port),
          '--cluster-port',
          String(this.busPorts[i]),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(dir, 'nodes.conf'),
          '--cluster-node-timeout',
          '2000',
          '--appendonly',
          'no',
          '--save',
          '',
          '--daemonize',
          'no',
          '--dir',
          dir,
        ]),
      );
    }
  }

  /** `host:port,…` of the nodes, for REDIS_CLUSTER_NODES. */
  get addresses(): string {
    return this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  }

  async start(): Promise<this> {
    for (let i = 0; i < this.nodes.length; i += 1) {
      this.busPorts[i] = await freePort();
      await this.nodes[i].start();
    }
    await run('redis-cli', ['--cluster', 'create', ...this.nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 });
    await waitUntil(
      async () => {
        for (const node of this.nodes) {
          const info = String(await redisCommand(node.port, ['CLUSTER', 'INFO']));
          if (!/cluster_state:ok/.test(info) || !info.includes(`cluster_known_nodes:${this.nodes.length}`) || !/cluster_slots_ok:16384/.test(info)) return false;
        }
        return true;
      },
      'every cluster node to report the cluster ok',
      30_000,
      20,
    );
    return this;
  }

  /** The port of the node that serves `key`'s slot (CLUSTER KEYSLOT, then CLUSTER SLOTS). */
  async portOf(key: string): Promise<number> {
    const slot = Number(await redisCommand(this.nodes[0].port, ['CLUSTER', 'KEYSLOT', key]));
    const ranges = (await redisCommand(this.nodes[0].port, ['CLUSTER', 'SLOTS'])) as Array<[number, number, [string, number]]>;
    const range = ranges.find(([from, to]) => slot >= Number(from) && slot <= Number(to));
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return Number(range[2][1]);
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop().catch(() => undefined)));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
