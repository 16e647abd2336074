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
 * of its own (`cluster-port`), and `replicas` replicas of each master, joined
 * by `redis-cli --cluster create`. Resolves `start()` once every node reports
 * the cluster ok with every slot served.
 */
export class OwnRedisCluster {
  readonly nodes: RedisNodeProcess[] = [];
  private readonly busPorts: number[] = [];
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-cluster-'));

  constructor(
    masters = 3,
    private readonly replicas = 0,
  ) {
    for (let i = 0; i < masters * (1 + replicas); i += 1) {
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
    await run('redis-cli', ['--cluster', 'create', ...this.nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', String(this.replicas), '--cluster-yes'], {
      timeout: 60_000,
    });
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
    // A replica that has not synchronised with its master would not be promoted when the master dies.
    await waitUntil(
      async () => {
        for (const node of this.nodes) {
          const replication = String(await redisCommand(node.port, ['INFO', 'replication']));
          if (/role:slave/.test(replication) ? !/master_link_status:up/.test(replication) : !replication.includes(`connected_slaves:${this.replicas}`)) return false;
        }
        return true;
      },
      'every replica to be in sync with its master',
      30_000,
      20,
    );
    return this;
  }

  /** The port of the master that serves `key`'s slot now (CLUSTER KEYSLOT, then CLUSTER SLOTS, asked of a node that runs). */
  async portOf(key: string): Promise<number> {
    const asked = this.nodes.find((node) => node.running);
    if (!asked) throw new Error('no cluster node runs');
    const slot = Number(await redisCommand(asked.port, ['CLUSTER', 'KEYSLOT', key]));
    const port = await this.masterOfSlot(slot);
    if (port === null) throw new Error(`no node serves slot ${slot}`);
    return port;
  }

  /** The port of the master that serves `slot` now (CLUSTER SLOTS, asked of a node that answers). */
  async masterOfSlot(slot: number): Promise<number | null> {
    for (const node of this.nodes.filter((candidate) => candidate.running)) {
      const ranges = (await redisCommand(node.port, ['CLUSTER', 'SLOTS'])) as Array<[number, number, [string, number]]> | null;
      const range = ranges?.find(([from, to]) => slot >= Number(from) && slot <= Number(to));
      if (range) return Number(range[2][1]);
    }
    return null;
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop().catch(() => undefined)));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
