import { once } from 'node:events';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { CLIENT_CLOSED_REQUEST, httpMetrics } from './http-metrics.js';
import { Metrics } from './metrics.js';

function count(text: string, status: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('http_server_request_duration_seconds_count{') && l.includes(`http_response_status_code="${status}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('httpMetrics', () => {
  let server: Server;
  let metrics: Metrics;
  let reached: Promise<void>;
  let closedByClient: Promise<void>;

  beforeEach(async () => {
    metrics = new Metrics();
    let markReached!: () => void;
    reached = new Promise((resolve) => (markReached = resolve));
    let markClosed!: () => void;
    closedByClient = new Promise((resolve) => (markClosed = resolve));
    const app = express();
    app.use(httpMetrics(metrics));
    app.get('/slow', (_req, res) => {
      res.status(201);
      res.once('close', () => setImmediate(markClosed));
      markReached();
    });
    app.get('/fast', (_req, res) => {
      res.status(201).json({ ok: true });
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it(`labels a request the client gave up on before any answer ${CLIENT_CLOSED_REQUEST}, not the status the handler had set`, async () => {
    const { port } = server.address() as AddressInfo;
    const req = httpRequest({ host: '127.0.0.1', port, path: '/slow' });
    req.on('error', () => undefined);
    req.end();
    await reached;
    req.destroy();
    await closedByClient;
    const text = await metrics.exposition();
    expect(count(text, String(CLIENT_CLOSED_REQUEST))).toBe(1);
    expect(count(text, '201')).toBeUndefined();
  });

  it('labels an answered request with its status', async () => {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/fast`);
    await res.json();
    let text = await metrics.exposition();
    while (count(text, '201') === undefined) {
      await new Promise((resolve) => setImmediate(resolve));
      text = await metrics.exposition();
    }
    expect(count(text, '201')).toBe(1);
    expect(count(text, String(CLIENT_CLOSED_REQUEST))).toBeUndefined();
  });
});
