import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { WEB_CLIENT_DIR } from '../src/web-client.module.js';
import { describeWithChromium, launchChromium, pageErrors, screenshot, signedInPage, VIEWPORTS } from './support/browser.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

if (!existsSync(path.join(WEB_CLIENT_DIR, 'index.html'))) {
  throw new Error(`The web client is not built (${WEB_CLIENT_DIR}); run npm run -w clients/typescript build && npm run -w web build`);
}

const VIEWPORT_LIST = [VIEWPORTS.desktop, VIEWPORTS.phone];

/** Errors of the page other than the browser's own log line for a refused request (a 409 the test provokes). */
function unexpected(errors: string[]): string[] {
  return errors.filter((e) => !/Failed to load resource: the server responded with a status of (409)/.test(e));
}

const messages = (page: Page) => page.locator('article[data-testid="message"]');
const lastAi = (page: Page) => page.locator('article[data-testid="message"][data-role="ai"]').last();

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
}

/**
 * Records, from inside the page, what the streamed (live) answer showed while it ran:
 * the retrieval steps listed and each text the streaming article held.
 */
async function watchStreaming(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen = { steps: 0, tools: 0, texts: [] as string[] };
    (window as any).__seen = seen;
    new MutationObserver(() => {
      // The live turn's article (a stored message carries its id). Its text is read whatever its status: when the
      // last tokens and the end of the stream arrive in one network read, React commits them together, and the
      // article goes from no text, or part of it, straight to complete.
      const live = document.querySelector('article[data-testid="message"][data-role="ai"]:not([data-message-id])');
      if (!live) return;
      const timeline = live.querySelector('section[aria-label="Retrieval steps"]');
      if (timeline) seen.steps = Math.max(seen.steps, timeline.querySelectorAll('li').length);
      const body = live.querySelector('.message-body')?.textContent ?? '';
      if (body && seen.texts.at(-1) !== body) seen.texts.push(body);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

const seen = (page: Page) => page.evaluate(() => (window as any).__seen as { steps: number; texts: string[] });

describeWithChromium('the chat view of the web client, in Chromium against the real service', () => {
  const weather = new FakeWeatherServer();
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '0' });
    base = await t.listen();
    browser = await launchChromium();
  }, 60000);
  afterAll(async () => {
    weather.release();
    await browser?.close();
    await t?.close();
    await weather.stop();
  });

  const tokenOf = (user: string) => t.auth(user).Authorization.slice('Bearer '.length);
  const storedMessages = async (user: string, sessionId: string) =>
    (await request(t.app.getHttpServer()).get(`/api/sessions/${sessionId}/messages`).set(t.auth(user)).expect(200)).body.messages as Array<{
      type: string;
      content: string;
      status: string;
      feedback: { rating: string } | null;
    }>;
  const listed = async (user: string, q?: string) =>
    (
      await request(t.app.getHttpServer())
        .get('/api/sessions')
        .query(q ? { q } : {})
        .set(t.auth(user))
        .expect(200)
    ).body.sessions as Array<{
      session_id: string;
      title: string;
    }>;

  it('streams a knowledge turn: live steps and tokens, the stored answer with its citation opening the trace viewer, and feedback', async () => {
    const user = uniqueUser('web-chat');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    const errors = pageErrors(page);
    try {
      await page.getByRole('heading', { name: 'Ask the knowledge base' }).waitFor();
      await watchStreaming(page);
      await send(page, 'How long is the Aurora X2 warranty?');
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();

      const [session] = await listed(user);
      const stored = await storedMessages(user, session.session_id);
      expect(stored.map((m) => [m.type, m.status])).toEqual([
        ['human', 'complete'],
        ['ai', 'complete'],
      ]);
      const answer = stored[1].content;
      expect(answer).toContain('[aurora-x2-mesh-manual.md');
      // While it ran: the retrieval steps were listed and the answer grew in the streaming message, never past the answer.
      const live = await seen(page);
      expect(live.steps).toBeGreaterThan(0);
      expect(live.texts.length).toBeGreaterThan(0);
      for (const text of live.texts) expect(answer.replace(/\s+/g, '')).toContain(text.replace(/\s+/g, ''));
      expect(await messages(page).count()).toBe(2);
      expect(page.url()).toContain(`#session=${session.session_id}`);

      // The citation is a button to its chunk: it opens its source beside the answer, and from there the trace viewer.
      const citation = lastAi(page)
        .getByRole('button', { name: /aurora-x2-mesh-manual\.md/ })
        .first();
      await citation.click();
      const source = page.getByRole('dialog', { name: 'Source' });
      await source.locator('mark[data-cited="true"]').waitFor();
      expect(await source.getByTestId('source-document').innerText()).toBe('aurora-x2-mesh-manual.md');
      expect(await source.getByTestId('source-collection').innerText()).toBe('default');
      await source.getByRole('button', { name: 'Show in trace' }).click();
      await source.waitFor({ state: 'detached' });
      const viewer = page.getByRole('dialog', { name: 'Trace' });
      await viewer.waitFor();
      await viewer.getByRole('button', { name: 'Close' }).click();
      await viewer.waitFor({ state: 'detached' });
      await lastAi(page).getByRole('button', { name: 'Show trace' }).click();
      await viewer.waitFor();
      await viewer.getByRole('button', { name: 'Close' }).click();

      // Thumbs up, then down, then down again clears it; each stored.
      const helpful = lastAi(page).getByRole('button', { name: 'Helpful', exact: true });
      const unhelpful = lastAi(page).getByRole('button', { name: 'Not helpful' });
      await helpful.click();
      await helpful.and(page.locator('[aria-pressed="true"]')).waitFor();
      expect((await storedMessages(user, session.session_id))[1].feedback).toMatchObject({ rating: 'up' });
      await unhelpful.click();
      await unhelpful.and(page.locator('[aria-pressed="true"]')).waitFor();
      expect(await helpful.getAttribute('aria-pressed')).toBe('false');
      expect((await storedMessages(user, session.session_id))[1].feedback).toMatchObject({ rating: 'down' });
      await unhelpful.click();
      await unhelpful.and(page.locator('[aria-pressed="false"]')).waitFor();
      expect((await storedMessages(user, session.session_id))[1].feedback).toBeNull();

      await screenshot(page, 'chat');
      const phone = await browser.newContext({ viewport: VIEWPORTS.phone });
      try {
        await phone.addInitScript((value) => sessionStorage.setItem('agentic-rag.token', value), tokenOf(user));
        const small = await phone.newPage();
        await small.goto(`${base}/#session=${session.session_id}`);
        await lastAi(small).and(small.locator('[data-status="complete"]')).waitFor();
        await screenshot(small, 'chat');
      } finally {
        await phone.close();
      }
      expect(unexpected(errors)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stops a turn held in the weather tool: the question is kept, marked stopped, and the session takes the next turn', async () => {
    for (const viewport of VIEWPORT_LIST) {
      const user = uniqueUser('web-stop');
      const { context, page } = await signedInPage(browser, base, tokenOf(user), viewport);
      const errors = pageErrors(page);
      try {
        weather.hold();
        const arrived = weather.nextRequest();
        await send(page, 'What is the weather in Paris?');
        await arrived;
        const stop = page.getByRole('button', { name: 'Stop' });
        await stop.and(page.locator(':enabled')).waitFor();
        await page.locator('article[data-role="ai"][data-status="streaming"]').waitFor();
        expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe(''); // accepted: the text is the transcript's now
        await screenshot(page, 'chat-streaming');
        await stop.click();
        await page.locator('article[data-role="human"][data-status="cancelled"]').waitFor();
        await page.getByText('Stopped before an answer.').waitFor();
        expect(await page.getByRole('alert').count()).toBe(0); // the user's own stop is not an error
        await stop.waitFor({ state: 'detached' });
        weather.release();

        const [session] = await listed(user);
        expect((await storedMessages(user, session.session_id)).map((m) => [m.type, m.status])).toEqual([['human', 'cancelled']]);
        await send(page, 'How long is the Aurora X2 warranty?');
        await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();
        expect((await storedMessages(user, session.session_id)).map((m) => [m.type, m.status])).toEqual([
          ['human', 'cancelled'],
          ['human', 'complete'],
          ['ai', 'complete'],
        ]);
        expect(unexpected(errors)).toEqual([]);
      } finally {
        weather.release();
        await context.close();
      }
    }
  });

  it.each([
    ['as it streams', false],
    // A proxy that buffers Server-Sent Events hands the page the whole stream at once: its text and its end in one read.
    ['when a buffering proxy delivers the stream in one read', true],
  ])('rejoins the running turn after a reload, from its start, without duplicating its text, %s', async (_, buffered) => {
    const user = uniqueUser('web-reload');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    const errors = pageErrors(page);
    try {
      weather.hold();
      const arrived = weather.nextRequest();
      await send(page, 'What is the weather in Paris?');
      await arrived;
      await page.getByRole('button', { name: 'Stop' }).and(page.locator(':enabled')).waitFor();
      const [session] = await listed(user);
      if (buffered) await page.route(/\/api\/chat\/runs\/[^/]+\/stream/, async (route) => route.fulfill({ response: await route.fetch() }));
      await page.reload();
      // After the reload: the same session, its running run rejoined (the live answer streams again).
      await page.locator('article[data-role="ai"][data-status="streaming"]').waitFor();
      await page.getByRole('button', { name: 'Stop' }).waitFor();
      expect(page.url()).toContain(`#session=${session.session_id}`);
      await watchStreaming(page);
      weather.release();
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();

      const stored = await storedMessages(user, session.session_id);
      expect(stored.map((m) => m.type)).toEqual(['human', 'ai']);
      const answer = stored[1].content;
      expect(answer).toMatch(/Paris/);
      // What streamed after the rejoin was the answer once: every state a prefix of it, the last one all of it.
      const live = await seen(page);
      expect(live.texts.length).toBeGreaterThan(0);
      const squash = (s: string) => s.replace(/\s+/g, '');
      for (const text of live.texts) expect(squash(answer).startsWith(squash(text))).toBe(true);
      expect(squash(live.texts.at(-1)!)).toBe(squash(answer));
      expect(await messages(page).count()).toBe(2);
      const shown = await lastAi(page).locator('.message-body').innerText();
      expect(squash(shown)).toBe(squash(answer));
      expect(unexpected(errors)).toEqual([]);
    } finally {
      weather.release();
      await context.close();
    }
  });

  it('rejoins after a reload a running session that is past the first page of the list', async () => {
    const user = uniqueUser('web-reload-deep');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      weather.hold();
      const arrived = weather.nextRequest();
      await send(page, 'What is the weather in Paris?');
      await arrived;
      const [session] = await listed(user);
      // 31 newer sessions push the running one off the list's first page (30).
      for (let i = 0; i < 31; i += 1) {
        await t.storage.appendTurn(user, randomUUID(), [
          { type: 'human', content: `newer ${i}` },
          { type: 'ai', content: 'ok' },
        ]);
      }
      await page.reload();
      expect(page.url()).toContain(`#session=${session.session_id}`);
      await page.locator('article[data-role="ai"][data-status="streaming"]').waitFor();
      weather.release();
      await lastAi(page).and(page.locator('[data-status="complete"]')).filter({ hasText: 'Paris' }).waitFor();
      // The page joined the run before its question was stored: the question shows once the turn's transcript is read.
      await messages(page).filter({ hasText: 'What is the weather in Paris?' }).waitFor();
      expect(await messages(page).count()).toBe(2);
    } finally {
      weather.release();
      await context.close();
    }
  });

  it('reconnects a dropped stream with Last-Event-ID and shows the answer once', async () => {
    const appUrl = new URL(base);
    const link = await new TcpProxy(appUrl.hostname, Number(appUrl.port)).start(); // a network the test can cut
    const user = uniqueUser('web-drop');
    const { context, page } = await signedInPage(browser, `http://127.0.0.1:${link.port}`, tokenOf(user));
    const errors = pageErrors(page);
    try {
      const rejoins: Array<string | undefined> = [];
      page.on('request', (r) => {
        if (/\/api\/chat\/runs\/[^/]+\/stream$/.test(r.url())) rejoins.push(r.headers()['last-event-id']);
      });
      weather.hold();
      const arrived = weather.nextRequest();
      await send(page, 'What is the weather in Paris?');
      await arrived;
      await page.getByRole('button', { name: 'Stop' }).and(page.locator(':enabled')).waitFor();
      // The page has the tool's start event (its chip shows), not only the weather service the request: what it resumes after.
      await page.locator('article[data-role="ai"][data-status="streaming"]').getByRole('list', { name: 'Tools used' }).getByText('get_weather', { exact: true }).waitFor();
      const rejoined = page.waitForRequest((r) => /\/api\/chat\/runs\/[^/]+\/stream$/.test(r.url()));
      link.dropConnections();
      await rejoined;
      weather.release();
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();
      // Resumed after the events it had (the metadata and the tool start at least), not from the start.
      expect(rejoins.length).toBeGreaterThanOrEqual(1);
      expect(Number(rejoins[0])).toBeGreaterThanOrEqual(2);
      const [session] = await listed(user);
      const stored = await storedMessages(user, session.session_id);
      expect(stored.map((m) => [m.type, m.status])).toEqual([
        ['human', 'complete'],
        ['ai', 'complete'],
      ]);
      expect(await messages(page).count()).toBe(2);
      expect((await lastAi(page).locator('.message-body').innerText()).replace(/\s+/g, '')).toBe(stored[1].content.replace(/\s+/g, ''));
      expect(await page.getByRole('alert').count()).toBe(0);
      // The browser logs the cut connection itself; nothing else went wrong.
      expect(unexpected(errors).filter((e) => !/^Failed to load resource: net::ERR_/.test(e))).toEqual([]);
    } finally {
      weather.release();
      await context.close();
      await link.stop();
    }
  });

  it('shows a paused question with its options, marks the session waiting, and resumes it with a click', async () => {
    for (const viewport of VIEWPORT_LIST) {
      const user = uniqueUser('web-hitl');
      const { context, page } = await signedInPage(browser, base, tokenOf(user), viewport);
      const errors = pageErrors(page);
      try {
        await send(page, 'How long is the Aurora warranty?');
        const options = page.getByRole('group', { name: 'Choose an option' });
        await options.waitFor();
        expect(await options.getByRole('button').evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label')))).toEqual(
          expect.arrayContaining(['Aurora X1 Router — User Manual', 'Aurora X2 Mesh System — User Manual']),
        );
        const sessions = page.getByRole('navigation', { name: 'Sessions' });
        if (viewport === VIEWPORTS.phone) await page.getByRole('button', { name: 'Sessions', exact: true }).click();
        await sessions.getByText('waiting for you').waitFor();
        if (viewport === VIEWPORTS.phone) await page.getByRole('button', { name: 'Sessions', exact: true }).click();
        await screenshot(page, 'hitl');
        // The pause outlives the page: after a reload the session (from the list's pending_hitl) offers the options again.
        await page.reload();
        await options.getByRole('button', { name: 'Aurora X2 Mesh System — User Manual' }).waitFor();

        await options.getByRole('button', { name: 'Aurora X2 Mesh System — User Manual' }).click();
        await page.locator('article[data-role="ai"][data-status="complete"]').nth(1).waitFor();
        await options.waitFor({ state: 'detached' });
        const [session] = await listed(user);
        const stored = await storedMessages(user, session.session_id);
        expect(stored.map((m) => [m.type, m.type === 'human' ? m.content : expect.any(String)])).toEqual([
          ['human', 'How long is the Aurora warranty?'],
          ['ai', expect.any(String)],
          ['human', 'Aurora X2 Mesh System — User Manual'],
          ['ai', expect.any(String)],
        ]);
        expect(stored[3].content).toMatch(/three-year/);
        await expect(lastAi(page).innerText()).resolves.toMatch(/three-year/);
        await sessions.getByText('waiting for you').waitFor({ state: 'detached' });
        expect(unexpected(errors)).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('lists sessions newest first with infinite scroll, renames, searches and deletes one after a confirmation', async () => {
    const user = uniqueUser('web-sessions');
    // 35 sessions: more than a page of the list (30).
    const ids: string[] = [];
    for (let i = 1; i <= 35; i += 1) {
      const id = randomUUID();
      ids.push(id);
      await t.storage.appendTurn(user, id, [
        { type: 'human', content: `Question number ${i}` },
        { type: 'ai', content: `Answer ${i}` },
      ]);
    }
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    const errors = pageErrors(page);
    try {
      const nav = page.getByRole('navigation', { name: 'Sessions' });
      const titles = () => nav.locator('.session-title').allInnerTexts();
      await nav.getByRole('button', { name: 'Question number 35', exact: true }).waitFor();
      expect((await titles()).slice(0, 3)).toEqual(['Question number 35', 'Question number 34', 'Question number 33']);
      // Scrolling to the end of the list loads the next page.
      await nav.getByRole('button', { name: 'Load more sessions' }).scrollIntoViewIfNeeded();
      await nav.getByRole('button', { name: 'Question number 1', exact: true }).waitFor();
      expect(await titles()).toEqual(Array.from({ length: 35 }, (_, i) => `Question number ${35 - i}`));
      expect(await nav.getByRole('button', { name: 'Load more sessions' }).count()).toBe(0);

      // Open one: its transcript.
      await nav.getByRole('button', { name: 'Question number 7', exact: true }).click();
      await page.locator('article[data-role="ai"]').getByText('Answer 7').waitFor();

      // Rename.
      const item = nav.locator('li', { has: page.getByRole('button', { name: 'Question number 7', exact: true }) });
      await item.getByRole('button', { name: 'Rename' }).click();
      await nav.getByLabel('Session title').fill('Router notes 路由器');
      await nav.getByLabel('Session title').press('Enter');
      await nav.getByRole('button', { name: 'Router notes 路由器' }).waitFor();
      expect((await listed(user, 'Router notes')).find((s) => s.session_id === ids[6])?.title).toBe('Router notes 路由器');

      // Search by title.
      await nav.getByLabel('Search sessions').fill('路由器');
      await page.waitForFunction(() => document.querySelectorAll('nav[aria-label="Sessions"] .session-title').length === 1);
      expect(await titles()).toEqual(['Router notes 路由器']);
      await nav.getByLabel('Search sessions').fill('');
      await nav.getByRole('button', { name: 'Question number 35', exact: true }).waitFor();
      await screenshot(page, 'sessions');

      // Delete: cancelled first, then confirmed.
      const doomed = nav.locator('li', { has: page.getByRole('button', { name: 'Question number 34', exact: true }) });
      await doomed.getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete session' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await listed(user)).some((s) => s.session_id === ids[33])).toBe(true);
      await doomed.getByRole('button', { name: 'Delete' }).click();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await nav.getByRole('button', { name: 'Question number 34', exact: true }).waitFor({ state: 'detached' });
      expect((await listed(user)).some((s) => s.session_id === ids[33])).toBe(false);
      await request(t.app.getHttpServer()).get(`/api/sessions/${ids[33]}/messages`).set(t.auth(user)).expect(404);

      const phone = await signedInPage(browser, base, tokenOf(user), VIEWPORTS.phone);
      try {
        await phone.page.getByRole('button', { name: 'Sessions', exact: true }).click();
        await phone.page.getByRole('navigation', { name: 'Sessions' }).getByRole('button', { name: 'Question number 35', exact: true }).waitFor();
        await screenshot(phone.page, 'sessions');
      } finally {
        await phone.context.close();
      }
      expect(unexpected(errors)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('never sends on an Enter that confirms an IME composition; Shift+Enter is a new line, Enter sends', async () => {
    const user = uniqueUser('web-ime');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      const sent: string[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/api/chat/stream') && r.method() === 'POST') sent.push(JSON.parse(r.postData() ?? '{}').message);
      });
      const box = page.getByLabel('Message', { exact: true });
      await box.fill('你好');
      // The Enter that picks the characters in a Chinese IME: isComposing (Chrome) or keyCode 229 (Safari).
      await box.dispatchEvent('compositionstart', { data: '' });
      await box.dispatchEvent('keydown', { key: 'Enter', code: 'Enter', isComposing: true, bubbles: true });
      await box.dispatchEvent('compositionend', { data: '你好' });
      await box.evaluate((el) => {
        const event = new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', bubbles: true, cancelable: true });
        Object.defineProperty(event, 'keyCode', { get: () => 229 });
        el.dispatchEvent(event);
      });
      expect(await box.inputValue()).toBe('你好');
      await box.press('Shift+Enter');
      await box.pressSequentially('世界');
      expect(await box.inputValue()).toBe('你好\n世界');
      expect(await messages(page).count()).toBe(0);
      await box.press('Enter');
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();
      // One turn was sent, the one Enter sent, with the new line: the composing Enters sent nothing.
      expect(sent).toEqual(['你好\n世界']);
      expect(await page.locator('article[data-role="human"]').innerText()).toContain('你好');
    } finally {
      await context.close();
    }
  });

  it('shows a refused turn (409: the session is busy) and keeps the typed text, then sends it once the session is free', async () => {
    const user = uniqueUser('web-409');
    const first = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello there' }).expect(200);
    const sessionId = first.body.session_id as string;
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    const errors = pageErrors(page);
    try {
      await page.goto(`${base}/#session=${sessionId}`);
      await page.reload();
      await messages(page).nth(1).waitFor();
      const held = await heldWeatherTurn(base, t.auth(user), weather, sessionId); // another tab's turn holds the session
      try {
        await send(page, 'Keep this question, please');
        const alert = page.getByRole('alert');
        await alert.waitFor();
        expect(await alert.innerText()).toMatch(/busy with another turn/);
        expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('Keep this question, please');
        expect(await messages(page).count()).toBe(2);
      } finally {
        weather.release();
        await held.stream.ended;
      }
      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('article[data-role="human"]').getByText('Keep this question, please').waitFor();
      await page.locator('article[data-role="ai"][data-status="complete"]').nth(2).waitFor();
      expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
      expect(unexpected(errors)).toEqual([]);
    } finally {
      weather.release();
      await context.close();
    }
  });
});

describeWithChromium('model text in the chat view, with the openai provider against a fake model', () => {
  const llm = new FakeOpenAIServer();
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp(llm.appEnv({ RATE_LIMIT_CHAT_PER_MINUTE: '0' }));
    base = await t.listen();
    browser = await launchChromium();
  }, 60000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await llm.stop();
  });
  beforeEach(() => llm.reset());

  it('renders HTML in an answer as inert text: no element, no handler run, no script', async () => {
    const hostile =
      'Here: <img src=x onerror="window.__pwned=1;alert(1)"> and <script>window.__pwned=2</script> ' +
      '[click](javascript:window.__pwned=3) <a href="javascript:alert(2)">link</a> **bold**';
    llm.play({ content: hostile });
    const user = uniqueUser('web-xss');
    const { context, page } = await signedInPage(browser, base, t.auth(user).Authorization.slice('Bearer '.length));
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await send(page, 'Show me something');
      const answer = lastAi(page).and(page.locator('[data-status="complete"]'));
      await answer.waitFor();
      const body = answer.locator('.message-body');
      expect(await body.innerText()).toContain('<img src=x onerror="window.__pwned=1;alert(1)">');
      expect(await body.innerText()).toContain('<script>window.__pwned=2</script>');
      expect(await body.locator('strong').innerText()).toBe('bold'); // Markdown still renders
      expect(await page.locator('article img, article script, article iframe').count()).toBe(0);
      const hrefs = await body.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
      expect(hrefs.filter((h) => h && !/^(https?:|mailto:)/.test(h))).toEqual([]);
      await body.getByText('click').click(); // the javascript: link is plain text now
      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
      expect(dialogs).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('survives a model answer that forges a citation link with a malformed escape (the page keeps working)', async () => {
    llm.play({ content: 'Forged: [see](cite:%E0%A4%A) and [ok](cite:%) then **still bold**' });
    const user = uniqueUser('web-cite-forge');
    const { context, page } = await signedInPage(browser, base, t.auth(user).Authorization.slice('Bearer '.length));
    const errors = pageErrors(page);
    try {
      await send(page, 'Cite something');
      const answer = lastAi(page).and(page.locator('[data-status="complete"]'));
      await answer.waitFor();
      expect(await answer.locator('.message-body strong').innerText()).toBe('still bold');
      await page.getByLabel('Message').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('keeps what the model had said when the user stops mid-answer, marked stopped', async () => {
    llm.play({ content: 'Hello there, this answer is going to be cut short.', hangAfter: 3 });
    const user = uniqueUser('web-stop-text');
    const { context, page } = await signedInPage(browser, base, t.auth(user).Authorization.slice('Bearer '.length));
    try {
      await send(page, 'Say hello');
      const streaming = page.locator('article[data-role="ai"][data-status="streaming"]');
      await streaming.getByText('Hello there, this').waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      const stopped = page.locator('article[data-role="ai"][data-status="cancelled"]');
      await stopped.waitFor();
      expect(await stopped.locator('.message-body').innerText()).toBe('Hello there, this');
      await stopped.getByText('Stopped — the answer is incomplete.').waitFor();
      const [session] = (await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions;
      const stored = (await request(t.app.getHttpServer()).get(`/api/sessions/${session.session_id}/messages`).set(t.auth(user)).expect(200)).body.messages;
      expect(stored.map((m: { type: string; content: string; status: string }) => [m.type, m.content.trim(), m.status])).toEqual([
        ['human', 'Say hello', 'cancelled'],
        ['ai', 'Hello there, this', 'cancelled'],
      ]);
    } finally {
      await context.close();
    }
  });
});
