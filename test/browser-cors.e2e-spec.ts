import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** Debian's chromium package; browser downloads do not work on these machines. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const chromiumAvailable = existsSync(CHROMIUM);
// .ci/run sets REQUIRE_CHROMIUM=1 once it has installed chromium: then this test fails rather than skips.
const describeWithChromium = chromiumAvailable || process.env.REQUIRE_CHROMIUM === '1' ? describe : describe.skip;
if (!chromiumAvailable) {
  console.warn(`\n*** ${CHROMIUM} not found: the browser CORS/EventSource test is SKIPPED. Install it with: apt-get install -y chromium ***\n`);
}

/**
 * What a web client on another origin runs: fetch for the streamed turn and
 * JSON calls, EventSource with a ticket to rejoin. Served as the page's own
 * script, so it runs inside that origin.
 */
const CLIENT_SCRIPT = String.raw`
const API = new URL(location.href).searchParams.get('api');

function parseBlock(block) {
  const fields = {};
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const at = line.indexOf(':');
    fields[line.slice(0, at)] = line.slice(at + 1).trimStart();
  }
  return fields.event ? { id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) } : null;
}

window.client = {
  /** Streams a turn with fetch and drops the connection once an event named stopAt arrived. */
  async streamUntil(token, body, stopAt) {
    const controller = new AbortController();
    const res = await fetch(API + '/api/chat/stream', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const events = [];
    let buffer = '';
    while (!events.some((e) => e.event === stopAt)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const event = parseBlock(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (event) events.push(event);
      }
    }
    controller.abort();
    return { status: res.status, requestId: res.headers.get('x-request-id'), events };
  },

  async json(method, path, token, body) {
    const headers = { Authorization: 'Bearer ' + token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() };
  },

  /** Follows a run with EventSource; its state is window.followed. */
  follow(path) {
    const state = (window.followed = { events: [], opens: 0, connectionErrors: 0, done: false });
    const source = new EventSource(API + path);
    source.onopen = () => (state.opens += 1);
    const record = (name) => (e) => {
      state.events.push({ id: Number(e.lastEventId), event: name, data: JSON.parse(e.data) });
      if (name === 'done' || name === 'error') {
        source.close();
        state.done = true;
      }
    };
    for (const name of ['metadata', 'step', 'tool', 'token', 'hitl', 'trace', 'done']) source.addEventListener(name, record(name));
    // The server's own "error" event is a MessageEvent; a lost connection is a plain Event (EventSource then reconnects).
    source.addEventListener('error', (e) => (e instanceof MessageEvent ? record('error')(e) : (state.connectionErrors += 1)));
  },
};
`;

interface PageEvent {
  id: number;
  event: string;
  data: any;
}

interface FollowState {
  events: PageEvent[];
  opens: number;
  connectionErrors: number;
  done: boolean;
}

/** A static site on its own port: another origin than the API. */
async function startPageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/client.js')) {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      return res.end(CLIENT_SCRIPT);
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><meta charset="utf-8"><title>web client</title><script src="/client.js"></script></head><body></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describeWithChromium('A web client on another origin, in Chromium', () => {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const weather = new FakeWeatherServer();
  let allowedSite: Awaited<ReturnType<typeof startPageServer>>;
  let otherSite: Awaited<ReturnType<typeof startPageServer>>;
  let t: TestApp;
  /** Between the browser and the app, so a test can cut the browser's connections. */
  let link: TcpProxy;
  let api: string;
  let browser: Browser;

  beforeAll(async () => {
    await weather.start();
    allowedSite = await startPageServer();
    otherSite = await startPageServer();
    t = await createTestApp({ LOG_LEVEL: 'info', CORS_ORIGINS: allowedSite.origin, WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url }, sink);
    const appUrl = new URL(await t.listen());
    link = await new TcpProxy(appUrl.hostname, Number(appUrl.port)).start();
    api = `http://127.0.0.1:${link.port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 60000);
  afterAll(async () => {
    await browser?.close();
    await link?.stop();
    await t?.close();
    await allowedSite?.close();
    await otherSite?.close();
    await weather.stop();
  });

  async function openSite(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/?api=${encodeURIComponent(api)}`);
    await page.waitForFunction(() => 'client' in globalThis);
    return page;
  }

  it('streams a turn with fetch, rejoins with EventSource and a ticket after a drop, lists and renames sessions', async () => {
    const user = uniqueUser('browser');
    const token = t.auth(user).Authorization.slice('Bearer '.length);
    const page = await openSite(allowedSite.origin);
    try {
      weather.hold(); // the run waits on the weather service while the page comes and goes
      const arrived = weather.nextRequest();
      const first = await page.evaluate(([token]) => (globalThis as any).client.streamUntil(token, { message: 'weather in Berlin?' }, 'metadata'), [token]);
      expect(first.status).toBe(200);
      expect(first.requestId).toEqual(expect.any(String)); // exposed to the page by CORS
      const { run_id: runId, session_id: sessionId } = first.events[0].data;
      expect(first.events[0]).toMatchObject({ id: 1, event: 'metadata' });
      await arrived;

      const ticket = await page.evaluate(([token, runId]) => (globalThis as any).client.json('POST', `/api/chat/runs/${runId}/ticket`, token), [token, runId]);
      expect(ticket).toMatchObject({ status: 200, body: { ticket: expect.any(String), expires_in: 60 } });

      await page.evaluate(
        ([runId, ticket]) => (globalThis as any).client.follow(`/api/chat/runs/${runId}/stream?ticket=${encodeURIComponent(ticket)}`),
        [runId, ticket.body.ticket as string],
      );
      await page.waitForFunction(() => ((globalThis as any).followed as FollowState).events.some((e) => e.event === 'tool'));
      link.dropConnections(); // the network drops under the open EventSource
      await page.waitForFunction(() => ((globalThis as any).followed as FollowState).connectionErrors >= 1);
      // EventSource reconnects by itself, to the same URL, with Last-Event-ID; the run is still waiting then.
      await page.waitForFunction(() => ((globalThis as any).followed as FollowState).opens >= 2, undefined, { timeout: 20000 });
      weather.release();
      await page.waitForFunction(() => ((globalThis as any).followed as FollowState).done, undefined, { timeout: 20000 });
      const followed = (await page.evaluate(() => (globalThis as any).followed)) as FollowState;

      const ids = followed.events.map((e) => e.id);
      expect(ids).toEqual(ids.map((_, i) => i + 1)); // every event once, in order, across the reconnect
      expect(followed.events[0]).toEqual(first.events[0]);
      expect(followed.events.at(-1)).toMatchObject({ event: 'done', data: { session_id: sessionId, response: expect.stringMatching(/Berlin/) } });
      const rejoins = lines.filter((l) => l.req?.method === 'GET' && String(l.req?.url).startsWith(`/api/chat/runs/${runId}/stream`));
      expect(rejoins.length).toBeGreaterThanOrEqual(2);
      expect(rejoins.every((l) => l.req.url.endsWith('?ticket=[redacted]'))).toBe(true);
      expect(JSON.stringify(lines)).not.toContain(ticket.body.ticket);

      const sessions = await page.evaluate(([token]) => (globalThis as any).client.json('GET', '/api/sessions', token), [token]);
      expect(sessions.status).toBe(200);
      expect(sessions.requestId).toEqual(expect.any(String));
      expect(sessions.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sessionId]);

      const renamed = await page.evaluate(
        ([token, sessionId]) => (globalThis as any).client.json('PATCH', `/api/sessions/${sessionId}`, token, { title: 'Berlin trip' }),
        [token, sessionId],
      );
      expect(renamed).toMatchObject({ status: 200, body: { session_id: sessionId, title: 'Berlin trip' } });
      const after = await page.evaluate(([token]) => (globalThis as any).client.json('GET', '/api/sessions', token), [token]);
      expect(after.body.sessions[0]).toMatchObject({ session_id: sessionId, title: 'Berlin trip' });
    } finally {
      weather.release();
      await page.close();
    }
  }, 60000);

  it('is refused by the browser on an origin CORS_ORIGINS does not list', async () => {
    const user = uniqueUser('browser-other');
    const token = t.auth(user).Authorization.slice('Bearer '.length);
    const page = await openSite(otherSite.origin);
    try {
      const attempt = (call: string) =>
        page.evaluate(
          async ([call, token]) => {
            const client = (globalThis as any).client;
            try {
              await (call === 'stream' ? client.streamUntil(token, { message: 'hello' }, 'done') : client.json('GET', '/api/sessions', token));
              return 'allowed';
            } catch (error) {
              return `${(error as Error).name}: ${(error as Error).message}`;
            }
          },
          [call, token],
        );
      expect(await attempt('sessions')).toMatch(/^TypeError: Failed to fetch/);
      expect(await attempt('stream')).toMatch(/^TypeError: Failed to fetch/);
      // The preflight failed, so the turn was never sent.
      const list = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
      expect(list.body.sessions).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
