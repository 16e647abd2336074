import { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { createClient } from '@keyv/redis';
import { exitOf, ExitStatus, freePort, spawnTiedToParent, waitUntil } from './service-process.js';

/** One redis-server process (a data node, a sentinel, a cluster node) on a loopback port. */
export class RedisNodeProcess {
  port = 0;
  private child?: ChildProcess;
  private exited?: Promise<ExitStatus>;
  output = '';
  /** Keeps a killed node's port taken: see kill9. */
  private portHolder?: net.Server;

  constructor(
    private readonly args: (port: number) => string[],
    private readonly command = 'redis-server',
  ) {}

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the node on a free port, or (`restart`) on the port it had: a cluster node's config names its port. */
  async start({ restart = false }: { restart?: boolean } = {}): Promise<this> {
    await this.releasePort();
    if (!restart || this.port === 0) this.port = await freePort();
    this.child = spawnTiedToParent(this.command, this.args(this.port), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = exitOf(this.child);
    const collect = (chunk: Buffer) => (this.output += chunk.toString('utf8'));
    this.child.stdout!.on('data', collect);
    this.child.stderr!.on('data', collect);
    await waitUntil(async () => (await redisCommand(this.port, ['PING'])) === 'PONG', `redis on ${this.port} to answer PING:\n${this.output.slice(-1000)}`, 20_000, 20);
    return this;
  }

  /**
   * SIGKILL. The port stays taken until the node starts again or stops: every
   * connection to it is reset, as to a dead node. Otherwise a server another
   * test starts meanwhile could be given the port and answer PING for the
   * dead node, and the sentinels would never fail over.
   */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGKILL');
    await this.exited;
    const holder = net.createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => holder.once('error', () => resolve()).listen(this.port, '127.0.0.1', () => resolve()));
    if (holder.listening) this.portHolder = holder;
  }

  async stop(): Promise<void> {
    await this.releasePort();
    if (!this.running) return;
    this.child!.kill('SIGTERM');
    await this.exited;
  }

  private async releasePort(): Promise<void> {
    const holder = this.portHolder;
    this.portHolder = undefined;
    if (holder) await new Promise((resolve) => holder.close(resolve));
  }
}

/** One command on a fresh connection (node-redis, no retries); its reply, or null when nothing answers (refused, reset, timed out). */
export async function redisCommand(port: number, args: string[]): Promise<unknown> {
  const client = createClient({ socket: { host: '127.0.0.1', port, connectTimeout: 2000, reconnectStrategy: false }, disableOfflineQueue: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.sendCommand(args);
  } catch {
    return null;
  } finally {
    // A connection that was refused is closed already.
    if (client.isOpen) client.destroy();
  }
}
