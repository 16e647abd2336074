import net from 'node:net';

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
    client.on('data', (chunk) => {
      if (this.mode === 'stall') return;
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
      if (this.mode !== 'stall') client.write(chunk);
    });
  }
}
