import net from 'node:net';
import { TEST_REDIS_URL } from './test-env.js';

export type ProxyMode = 'forward' | 'stall' | 'refuse';

/**
 * A TCP proxy in front of a real server, to make a dependency stall (accept
 * but never answer), refuse connections, or answer late, and then recover.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly delayed = new Set<NodeJS.Timeout>();
  private mode: ProxyMode = 'forward';
  private delayMs = 0;
  private holding = false;
  private held: Array<() => void> = [];
  private readonly heldWatchers = new Set<() => void>();
  private lostReply?: LostReply;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this;
  }

  /** Existing connections are cut on every change, so clients see the new behaviour at once. */
  setMode(mode: ProxyMode): void {
    this.mode = mode;
    this.dropConnections();
  }

  /** Forwards, holding each chunk from the client for `ms` first. */
  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  /** Keeps what clients send from reaching the server until release(): a link that delivers late, in order. */
  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const deliver of this.held.splice(0)) deliver();
  }

  /** Resolves once `count` chunks from clients are being held. */
  waitForHeld(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.held.length < count) return;
        this.heldWatchers.delete(check);
        resolve();
      };
      this.heldWatchers.add(check);
      check();
    });
  }

  /**
   * A reply lost on its way back, once: on the first connection whose client
   * sends `after` and then `trigger` (counting from this call), the chunk with
   * `trigger` reaches the server (`deliver`) or is dropped too, and nothing the
   * server sends on that connection reaches the client any more. The
   * connection stays open. Resolves once it struck. `only`: the connections
   * considered (by their client socket); unset, all of them.
   */
  loseReplyTo(trigger: string, options: { after: string; deliver: boolean; only?: (client: net.Socket) => boolean }): Promise<void> {
    return new Promise((struck) => {
      this.lostReply = { ...options, trigger, marked: new WeakSet(), struck };
    });
  }

  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async stop(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    this.dropConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    if (this.mode === 'refuse') {
      client.destroy();
      return;
    }
    if (this.mode === 'stall') return; // accepted, never answered
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    // Set once a lost reply struck this connection: what no longer passes.
    let cut: 'replies' | 'both' | undefined;
    client.on('data', (chunk) => {
      if (this.mode === 'stall' || cut === 'both') return;
      const fate = cut ? 'pass' : this.lostReplyFate(client, chunk);
      if (fate !== 'pass') cut = fate === 'deliver' ? 'replies' : 'both';
      if (cut === 'both') return;
      if (this.holding) {
        this.held.push(() => upstream.write(chunk));
        for (const watcher of [...this.heldWatchers]) watcher();
        return;
      }
      if (this.delayMs === 0) {
        upstream.write(chunk);
        return;
      }
      const timer = setTimeout(() => {
        this.delayed.delete(timer);
        upstream.write(chunk);
      }, this.delayMs);
      this.delayed.add(timer);
    });
    upstream.on('data', (chunk) => {
      if (this.mode !== 'stall' && !cut) client.write(chunk);
    });
  }

  /** What the armed lost reply makes of a client's chunk: nothing (pass), the last delivered one (deliver), or swallowed. */
  private lostReplyFate(client: net.Socket, chunk: Buffer): 'pass' | 'deliver' | 'swallow' {
    const lost = this.lostReply;
    if (!lost || (lost.only && !lost.only(client))) return 'pass';
    const text = chunk.toString('latin1');
    let from = 0;
    if (!lost.marked.has(client)) {
      const at = text.indexOf(lost.after);
      if (at < 0) return 'pass';
      lost.marked.add(client);
      from = at + lost.after.length;
    }
    if (text.indexOf(lost.trigger, from) < 0) return 'pass';
    this.lostReply = undefined;
    lost.struck();
    return lost.deliver ? 'deliver' : 'swallow';
  }
}

interface LostReply {
  trigger: string;
  after: string;
  deliver: boolean;
  /** Only the connections of clients for which this is true. */
  only?: (client: net.Socket) => boolean;
  /** Connections that sent `after` since the fault was armed. */
  marked: WeakSet<net.Socket>;
  struck: () => void;
}

/** A started proxy in front of this worker's test Redis (pair it with testRedisUrlThrough(proxy.port)). */
export function proxyToTestRedis(): Promise<TcpProxy> {
  const url = new URL(TEST_REDIS_URL);
  return new TcpProxy(url.hostname, Number(url.port || 6379)).start();
}
