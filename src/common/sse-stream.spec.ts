import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { Response } from 'express';
import { serviceSseTransport, SseTransport, SseWriter } from './sse-stream.js';

/** The part of an Express response the writer uses: what it was sent, and a socket that can fill up. */
class FakeResponse extends EventEmitter {
  statusCode = 0;
  readonly headers: Array<[string, string]> = [];
  readonly chunks: string[] = [];
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  /** No connection of its own: the writer writes through the response. */
  readonly socket = null;
  readonly removed: string[] = [];
  /** What the next writes answer: false as a full socket does, until `drain`. */
  socketFull = false;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  setHeader(name: string, value: string): this {
    this.headers.push([name, value]);
    return this;
  }

  removeHeader(name: string): void {
    this.removed.push(name);
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  write(chunk: string): boolean {
    if (this.writableEnded) throw new Error('write after end');
    this.chunks.push(chunk);
    return !this.socketFull;
  }

  end(): this {
    this.writableEnded = true;
    return this;
  }

  drain(): void {
    this.socketFull = false;
    this.emit('drain');
  }

  /** The client left: the socket closes without the stream having ended. */
  clientLeaves(): void {
    this.destroyed = true;
    this.emit('close');
  }

  get text(): string {
    return this.chunks.join('');
  }
}

function writerOn(transport: SseTransport): { res: FakeResponse; writer: SseWriter } {
  const res = new FakeResponse();
  return { res, writer: new SseWriter(res as unknown as Response, transport) };
}

/** Whether the promise has settled by the time the queued microtasks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('SseWriter', () => {
  afterEach(() => jest.useRealTimers());

  it('opens with status 200, the event-stream headers in order and the opening comment, once', () => {
    const { res, writer } = writerOn(serviceSseTransport(15000));
    expect(writer.opened).toBe(false);
    writer.open();
    writer.open();
    expect(res.statusCode).toBe(200);
    expect(res.headers).toEqual([
      ['Content-Type', 'text/event-stream; charset=utf-8'],
      ['Cache-Control', 'no-cache, no-transform'],
      ['Connection', 'close'],
      ['X-Accel-Buffering', 'no'],
      ['Transfer-Encoding', 'chunked'],
    ]);
    expect(res.text).toBe(': stream open\n\n');
    expect(writer.opened).toBe(true);
  });

  it("sends a protocol's own headers and no opening comment when it names none", () => {
    const { res, writer } = writerOn({ headers: [['Content-Type', 'text/event-stream']], heartbeatComment: 'ping', heartbeatMs: 1000 });
    writer.open();
    expect(res.headers).toEqual([
      ['Content-Type', 'text/event-stream'],
      ['Transfer-Encoding', 'chunked'],
    ]);
    expect(res.text).toBe('');
  });

  it('opens the stream on the first write, and writes nothing for empty text', async () => {
    const { res, writer } = writerOn(serviceSseTransport(15000));
    await writer.write('');
    expect(writer.opened).toBe(false);
    await writer.write('event: job\ndata: {}\n\n');
    expect(res.chunks).toEqual([': stream open\n\n', 'event: job\ndata: {}\n\n']);
  });

  it('sends the heartbeat comment on a fixed clock, writes or not, until the end', () => {
    jest.useFakeTimers();
    const { res, writer } = writerOn(serviceSseTransport(1000));
    writer.open();
    writer.startHeartbeat();
    jest.advanceTimersByTime(999);
    expect(res.chunks).toEqual([': stream open\n\n']);
    jest.advanceTimersByTime(1);
    void writer.write('data: a\n\n');
    jest.advanceTimersByTime(1000);
    expect(res.chunks).toEqual([': stream open\n\n', ': heartbeat\n\n', 'data: a\n\n', ': heartbeat\n\n']);
    writer.end();
    jest.advanceTimersByTime(5000);
    expect(res.chunks).toHaveLength(4);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends an idle heartbeat only after heartbeatMs without a write', () => {
    jest.useFakeTimers();
    const { res, writer } = writerOn({ heartbeatComment: 'ping', heartbeatMs: 1000, heartbeatWhenIdle: true });
    writer.open();
    writer.startHeartbeat();
    jest.advanceTimersByTime(600);
    void writer.write('data: a\n\n');
    jest.advanceTimersByTime(600);
    expect(res.chunks).toEqual(['data: a\n\n']);
    jest.advanceTimersByTime(400);
    expect(res.chunks).toEqual(['data: a\n\n', ': ping\n\n']);
    jest.advanceTimersByTime(1000);
    expect(res.chunks).toEqual(['data: a\n\n', ': ping\n\n', ': ping\n\n']);
    writer.end();
  });

  it('resolves a write at once while the socket takes more, and only after drain when it is full', async () => {
    const { res, writer } = writerOn(serviceSseTransport(15000));
    writer.open();
    expect(await settled(writer.write('data: 1\n\n'))).toBe(true);
    res.socketFull = true;
    const held = writer.write('data: 2\n\n');
    expect(await settled(held)).toBe(false);
    res.drain();
    expect(await settled(held)).toBe(true);
    expect(res.listenerCount('drain')).toBe(0);
  });

  it('lets a write waiting for drain go on when the stream ends', async () => {
    const { res, writer } = writerOn(serviceSseTransport(15000));
    res.socketFull = true;
    const held = writer.write('data: 1\n\n');
    expect(await settled(held)).toBe(false);
    writer.end();
    expect(await settled(held)).toBe(true);
    expect(res.listenerCount('drain')).toBe(0);
  });

  it('ends the response once, and writes nothing after the end', async () => {
    const { res, writer } = writerOn(serviceSseTransport(15000));
    await writer.write('data: 1\n\n');
    writer.end();
    writer.end();
    expect(writer.ended).toBe(true);
    await writer.write('data: 2\n\n');
    expect(res.chunks).toEqual([': stream open\n\n', 'data: 1\n\n']);
  });

  it('aborts its signal when the client leaves, stops the heartbeat and releases waiting writes', async () => {
    jest.useFakeTimers();
    const { res, writer } = writerOn(serviceSseTransport(1000));
    writer.open();
    writer.startHeartbeat();
    res.socketFull = true;
    const held = writer.write('data: 1\n\n');
    expect(writer.signal.aborted).toBe(false);
    res.clientLeaves();
    expect(writer.signal.aborted).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
    expect(await settled(held)).toBe(true);
    writer.end();
    expect(res.writableEnded).toBe(false); // a destroyed response is not ended again
  });

  describe('on a real connection', () => {
    type Client = { socket: net.Socket; raw: () => string; closed: Promise<unknown> };

    /** Serves one request with `handle`, sent as `request` (a request line and headers) by a client that reads the raw bytes. */
    async function serve(handle: (res: Response) => void, request: string, read = true): Promise<Client & { stop: () => void }> {
      // A plain Node response with the one Express method the writer calls.
      const server = http.createServer((req, res) => handle(Object.assign(res, { req, status: (code: number) => ((res.statusCode = code), res) }) as unknown as Response));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
      if (!read) socket.pause();
      socket.write(`${request}\r\nHost: test\r\nConnection: close\r\n\r\n`);
      let raw = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => (raw += chunk));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      return { socket, raw: () => raw, closed, stop: () => server.close() };
    }

    /** The raw bytes of the exchange, once the connection closed. */
    async function exchange(handle: (res: Response) => void, request = 'GET /stream HTTP/1.1'): Promise<{ head: string; body: string }> {
      const client = await serve(handle, request);
      try {
        await client.closed;
      } finally {
        client.stop();
      }
      const [head, ...rest] = client.raw().split('\r\n\r\n');
      return { head, body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8') };
    }

    const token = 'id: 1\nevent: token\ndata: {"text":"héllo \u202e 你好"}\n\n';
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    /** A stream of one event, then its end. */
    const oneEvent = (res: Response) => {
      const writer = new SseWriter(res, serviceSseTransport(15000));
      void writer.write(token);
      writer.end();
    };

    it('frames each write as one chunk of its UTF-8 length, and ends the body with the last chunk', async () => {
      const { head, body } = await exchange((res) => {
        const writer = new SseWriter(res, serviceSseTransport(15000));
        void writer.write(token);
        void writer.write('id: 2\nevent: done\ndata: {}\n\n');
        writer.end();
      });
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head).toMatch(/\r\nTransfer-Encoding: chunked(\r\n|$)/i);
      expect(head).not.toMatch(/content-length/i);
      expect(body).toBe(chunk(': stream open\n\n') + chunk(token) + chunk('id: 2\nevent: done\ndata: {}\n\n') + '0\r\n\r\n');
    });

    it('hands each write to the connection at once, leaving it uncorked (a response write holds it corked until the next tick)', async () => {
      let corkedAfterWrite = -1;
      await exchange((res) => {
        const writer = new SseWriter(res, serviceSseTransport(15000));
        writer.open();
        void writer.write('data: 1\n\n');
        corkedAfterWrite = res.socket!.writableCorked;
        writer.end();
      });
      expect(corkedAfterWrite).toBe(0);
    });

    it('sends an HTTP/1.0 client the events without chunks, ending with the connection', async () => {
      const { head, body } = await exchange(oneEvent, 'GET /stream HTTP/1.0');
      expect(head).not.toMatch(/transfer-encoding/i);
      expect(body).toBe(': stream open\n\n' + token);
    });

    it('sends no body in answer to HEAD', async () => {
      const { head, body } = await exchange(oneEvent, 'HEAD /stream HTTP/1.1');
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(body).toBe('');
    });

    it('holds a write while the client reads nothing, and lets it go when the client reads again', async () => {
      let held: Promise<void> | undefined;
      // The client reads again only once the test has seen the write held (resuming on heldSeen raced the check).
      let checkedHeld!: () => void;
      const checked = new Promise<void>((resolve) => (checkedHeld = resolve));
      const heldSeen = new Promise<void>((resolve) => {
        void serve(
          (res) => {
            const writer = new SseWriter(res, serviceSseTransport(15000));
            const block = `data: ${'x'.repeat(256 * 1024)}\n\n`;
            // Written until the connection's buffers are full (the client does not read).
            for (let i = 0; i < 1000 && held === undefined; i += 1) held = writer.writeOrWait(block);
            resolve();
            void held?.then(() => writer.end());
          },
          'GET /stream HTTP/1.1',
          false,
        ).then(async (client) => {
          await checked;
          client.socket.resume();
          await client.closed;
          client.stop();
        });
      });
      await heldSeen;
      expect(held).toBeDefined();
      expect(await settled(held!)).toBe(false);
      checkedHeld();
      await held; // the client reads again: the write goes on (the test times out otherwise)
    });

    it('writes nothing after the response was ended by someone else', async () => {
      const { body } = await exchange((res) => {
        const writer = new SseWriter(res, serviceSseTransport(15000));
        void writer.write(token);
        res.end();
        void writer.write('data: after the end\n\n');
      });
      expect(body).toBe(chunk(': stream open\n\n') + chunk(token) + '0\r\n\r\n');
    });

    it('sends no chunks to a request older than HTTP/1.1', async () => {
      const { head, body } = await exchange(oneEvent, 'GET /stream HTTP/0.9');
      expect(head).not.toMatch(/transfer-encoding/i);
      expect(body).toBe(': stream open\n\n' + token);
    });

    it('is not opened when its headers could not be set, so the error can still be answered', async () => {
      let opened: boolean | undefined;
      const { head } = await exchange((res) => {
        const writer = new SseWriter(res, { headers: [['X-Run', 'a\nb']], heartbeatComment: 'ping', heartbeatMs: 60000 });
        try {
          writer.open();
        } catch {
          opened = writer.opened;
          res.statusCode = 500;
          res.end();
        }
      });
      expect(opened).toBe(false);
      expect(head).toMatch(/^HTTP\/1\.1 500 /);
    });

    it('knows a client that left before the writer was made: its signal is aborted and writes do not wait', async () => {
      let aborted: boolean | undefined;
      let wrote: Promise<void> | undefined;
      let entered!: () => void;
      const handling = new Promise<void>((resolve) => (entered = resolve));
      let made!: () => void;
      const writerMade = new Promise<void>((resolve) => (made = resolve));
      const client = await serve((res) => {
        entered();
        // The writer comes after the client left (a turn being prepared meanwhile).
        res.once('close', () => {
          const writer = new SseWriter(res, serviceSseTransport(15000));
          aborted = writer.signal.aborted;
          wrote = writer.write(token);
          made();
        });
      }, 'GET /stream HTTP/1.1');
      await handling;
      client.socket.destroy();
      await writerMade;
      client.stop();
      expect(aborted).toBe(true);
      expect(await settled(wrote!)).toBe(true);
    });
  });
});
