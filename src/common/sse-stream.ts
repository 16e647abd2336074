import type { Socket } from 'node:net';
import type { Response } from 'express';

/** The headers of every event stream: no caching or proxy buffering, and a socket that closes with the stream. */
const SSE_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Type', 'text/event-stream; charset=utf-8'],
  ['Cache-Control', 'no-cache, no-transform'],
  // The socket closes with the stream, so a stream that ends during shutdown leaves no idle socket holding the server open.
  ['Connection', 'close'],
  ['X-Accel-Buffering', 'no'],
];

/** How a protocol's event stream looks on the wire, apart from its events. */
export interface SseTransport {
  /** The response headers, in order (SSE_HEADERS unless the protocol names its own). */
  headers?: ReadonlyArray<[string, string]>;
  /** The comment line sent first, if any (`stream open`). */
  openComment?: string;
  /** The comment line that keeps the connection (`heartbeat`) and how often it comes. */
  heartbeatComment: string;
  heartbeatMs: number;
  /** The heartbeat comes only after `heartbeatMs` without a write (AI SDK), rather than on a fixed clock. */
  heartbeatWhenIdle?: boolean;
}

/** The transport of this service's own event streams: `: stream open` first, `: heartbeat` on a fixed clock. */
export function serviceSseTransport(heartbeatMs: number): SseTransport {
  return { openComment: 'stream open', heartbeatComment: 'heartbeat', heartbeatMs };
}

/**
 * The transport of one Server-Sent Events response, the same for every
 * protocol: status and headers, the opening comment, heartbeats, writes
 * that wait while the client's socket is full, and the end. What goes in
 * each write (an event with its id, a `data:` chunk, `[DONE]`) is the
 * protocol adapter's. `signal` aborts when the client leaves.
 */
export class SseWriter {
  private readonly left = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly waiting = new Set<() => void>();
  /** The connection the chunks go to directly (see send()); null writes through the response. */
  private socket: Socket | null = null;

  constructor(
    private readonly res: Response,
    private readonly transport: SseTransport,
  ) {
    const closed = () => {
      this.stopHeartbeat();
      this.release();
      this.left.abort();
    };
    // A client that left before the writer was made (while its turn was being prepared) closed the response already.
    if (res.destroyed) closed();
    else res.on('close', closed);
  }

  /** Aborted when the response closes (the client left, or the stream ended). */
  get signal(): AbortSignal {
    return this.left.signal;
  }

  get opened(): boolean {
    return this.res.headersSent;
  }

  get ended(): boolean {
    return this.res.writableEnded;
  }

  /** Sends the status, the headers and the opening comment (once). */
  open(): void {
    if (this.res.headersSent) return;
    this.res.status(200);
    for (const [name, value] of this.transport.headers ?? SSE_HEADERS) this.res.setHeader(name, value);
    // Chunked, as Node would choose for HTTP/1.1, but named, so send() can frame the chunks itself. HTTP/1.0 has no
    // chunks: its body ends with the connection, written through the response.
    const request = this.res.req as Response['req'] | undefined;
    const chunked = request === undefined || request.httpVersionMajor > 1 || (request.httpVersionMajor === 1 && request.httpVersionMinor >= 1);
    if (chunked) this.res.setHeader('Transfer-Encoding', 'chunked');
    this.res.flushHeaders();
    // Through the response: an answer to HEAD (no body at all), and one waiting behind another on its connection (no socket yet).
    if (chunked && request?.method !== 'HEAD' && this.res.socket) this.socket = this.res.socket;
    if (this.transport.openComment !== undefined) this.send(`: ${this.transport.openComment}\n\n`);
  }

  /** Starts the heartbeat comments (until the end). */
  startHeartbeat(): void {
    if (this.ended || this.heartbeat) return;
    this.heartbeat = this.transport.heartbeatWhenIdle ? this.idleTimer() : setInterval(() => this.comment(), this.transport.heartbeatMs);
  }

  /**
   * Writes `text` (opening the stream first if needed); nothing once the
   * stream ended. Resolves when the client's socket can take more (or the
   * stream ended), so a slow client holds its events back, not the server's memory.
   */
  write(text: string): Promise<void> {
    return this.writeOrWait(text) ?? Promise.resolve();
  }

  /** write(), but undefined rather than a promise when the socket takes it at once (no promise per write for many followers). */
  writeOrWait(text: string): Promise<void> | undefined {
    if (this.ended || this.res.destroyed || text === '') return undefined;
    this.open();
    if (this.transport.heartbeatWhenIdle && this.heartbeat) this.heartbeat.refresh();
    if (this.send(text)) return undefined;
    // The emitter that was written to says when it can take more.
    const full = this.socket ?? this.res;
    return new Promise((resolve) => {
      const done = () => {
        full.off('drain', done);
        this.waiting.delete(done);
        resolve();
      };
      this.waiting.add(done);
      full.once('drain', done);
    });
  }

  /** Stops the heartbeat and ends the response (a no-op once ended). */
  end(): void {
    this.stopHeartbeat();
    this.release();
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
  }

  private comment(): void {
    if (!this.ended && !this.res.destroyed) this.send(`: ${this.transport.heartbeatComment}\n\n`);
  }

  /**
   * Writes one chunk of the body: framed here and handed to the connection
   * at once, in one write. Through the response, a write holds its
   * connection corked until the next tick and sends the framing and the
   * bytes as four buffers: an instance writing an event to a thousand
   * followers sent nothing until it had written to all of them (the first
   * follower waited as long as the last), with more CPU per write. The
   * response still ends the body (its last chunk) and knows nothing it needs
   * of these writes.
   */
  private send(text: string): boolean {
    if (this.socket === null) return this.res.write(text);
    return this.socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  }

  private idleTimer(): NodeJS.Timeout {
    return setTimeout(() => {
      this.comment();
      this.heartbeat?.refresh();
    }, this.transport.heartbeatMs);
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Writes waiting for the socket go on (to find the stream ended). */
  private release(): void {
    for (const done of [...this.waiting]) done();
  }
}
