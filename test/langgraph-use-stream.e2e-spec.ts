import { execFile } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { BROWSER_WAIT_MS, describeWithChromium, launchChromium, signedInPage } from './support/browser.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const PAGE_SOURCE = path.resolve('test', 'fixtures', 'use-stream-page');

/** Serves the built page from its own origin, so the SDK's requests are cross-origin (CORS, Content-Location exposed). */
async function servePage(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const file = new URL(req.url ?? '/', 'http://page').pathname;
    const resolved = path.join(dir, file === '/' ? 'index.html' : path.normalize(file));
    if (!resolved.startsWith(dir)) return void res.writeHead(404).end();
    const type = resolved.endsWith('.js') ? 'text/javascript' : resolved.endsWith('.html') ? 'text/html' : 'application/octet-stream';
    createReadStream(resolved)
      .on('error', () => res.writeHead(404).end())
      .once('open', () => res.writeHead(200, { 'Content-Type': type }))
      .pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A React page built with `useStream` (@langchain/langgraph-sdk/react) against the service's /langgraph, in Chromium. */
describeWithChromium('useStream from @langchain/langgraph-sdk/react against /langgraph', () => {
  const weather = new FakeWeatherServer();
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: { server: Server; origin: string };
  let dist: string;

  beforeAll(async () => {
    await weather.start();
    dist = mkdtempSync(path.join(tmpdir(), 'use-stream-page-'));
    await promisify(execFile)(process.execPath, [path.join(PAGE_SOURCE, 'build.mjs'), dist]);
    page = await servePage(dist);
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '0', CORS_ORIGINS: page.origin });
    base = await t.listen();
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    weather.release();
    await browser?.close();
    await t?.close();
    await weather.stop();
    page?.server.close();
    rmSync(dist, { recursive: true, force: true });
  });

  async function open(user: string, threadId?: string): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(BROWSER_WAIT_MS);
    const opened = await context.newPage();
    const token = t.auth(user).Authorization.slice('Bearer '.length);
    const query = new URLSearchParams({ apiUrl: `${base}/langgraph`, token, ...(threadId ? { threadId } : {}) });
    await opened.goto(`${page.origin}/?${query}`);
    return opened;
  }
  const ask = async (on: Page, question: string) => {
    await on.fill('#draft', question);
    await on.click('#send');
  };
  const answers = (on: Page) => on.locator('li.message[data-type="ai"]');

  it('streams a turn into the page, shows the interrupt of an ambiguous question and resumes it by a click', async () => {
    const user = uniqueUser('use-stream');
    const on = await open(user);
    await ask(on, 'How long is the Aurora X2 warranty?');
    await on.locator('li.message[data-type="ai"]', { hasText: 'three-year' }).waitFor();
    await on.locator('main[data-loading="false"]').waitFor();
    const threadId = await on.locator('main').getAttribute('data-thread');
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    // The question and its answer, once each (the stream's chunks and the history agree on the answer's id).
    expect(await on.locator('li.message').allTextContents()).toEqual(['How long is the Aurora X2 warranty?', expect.stringContaining('three-year')]);

    // The thread is a session: the service's own web client lists it and shows its turn.
    const web = await signedInPage(browser, base, t.auth(user).Authorization.slice('Bearer '.length));
    await web.page.getByRole('navigation', { name: 'Sessions' }).getByText('How long is the Aurora X2 warranty?').click();
    await web.page
      .getByText(/three-year/)
      .first()
      .waitFor();
    await web.context.close();

    await ask(on, 'How long is the Aurora warranty?');
    const option = on.locator('#interrupt button.option', { hasText: 'Aurora X2 Mesh System' });
    await option.waitFor();
    await option.click();
    await on.locator('#interrupt').waitFor({ state: 'detached' });
    await on.locator('main[data-loading="false"]').waitFor();
    await answers(on).nth(2).waitFor();
    expect(await answers(on).nth(2).textContent()).toMatch(/three-year/);
    expect(await on.locator('#error').count()).toBe(0);
    await on.context().close();
  });

  it('rejoins a run after a reload in the middle of it (reconnectOnMount) and shows its answer when it ends', async () => {
    const user = uniqueUser('use-stream-reload');
    const on = await open(user);
    weather.hold();
    const arrived = weather.nextRequest();
    await ask(on, 'What is the weather in Paris?');
    await arrived;
    const threadId = (await on.locator('main').getAttribute('data-thread'))!;
    expect(threadId).not.toBe('');
    expect(await on.evaluate((id) => sessionStorage.getItem(`lg:stream:${id}`), threadId)).toMatch(/^[0-9a-f-]{36}$/);
    await on.reload();
    // The page rejoined the run: it is loading while the run is held, before anything else is sent.
    await on.locator('main[data-loading="true"]').waitFor();
    weather.release();
    await answers(on).first().waitFor();
    await on.locator('main[data-loading="false"]').waitFor();
    expect(await answers(on).first().textContent()).toMatch(/Paris/);
    expect(await on.locator('li.message[data-type="human"]').allTextContents()).toEqual(['What is the weather in Paris?']);
    expect(await on.evaluate((id) => sessionStorage.getItem(`lg:stream:${id}`), threadId)).toBeNull();
    await on.context().close();
  });
});
