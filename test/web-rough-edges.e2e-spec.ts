import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { WEB_CLIENT_DIR } from '../src/web-client.module.js';
import { describeWithChromium, emptyChatLoaded, launchChromium, signedInPage, VIEWPORTS } from './support/browser.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

// The rough edges a new user met in the web client (issue 24, item 5): one test each.

if (!existsSync(path.join(WEB_CLIENT_DIR, 'index.html'))) {
  throw new Error(`The web client is not built (${WEB_CLIENT_DIR}); run npm run --silent build`);
}

const messages = (page: Page) => page.locator('article[data-testid="message"]');
const lastAi = (page: Page) => page.locator('article[data-testid="message"][data-role="ai"]').last();

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
}

describeWithChromium('the web client, with the local model: rough edges', () => {
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
  const http = () => request(t.app.getHttpServer());

  it('shows the question of a rejoined run while it streams, before the turn is stored', async () => {
    const user = uniqueUser('web-rejoin-question');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      weather.hold();
      const arrived = weather.nextRequest();
      await send(page, 'What is the weather in Paris?');
      await arrived;
      await page.getByRole('button', { name: 'Stop' }).and(page.locator(':enabled')).waitFor();
      // Records, from the page's start, whether the question ever showed beside the streaming answer.
      await context.addInitScript(() => {
        (window as any).__both = false;
        new MutationObserver(() => {
          const streaming = document.querySelector('article[data-role="ai"][data-status="streaming"]');
          const question = [...document.querySelectorAll('article[data-role="human"]')].some((a) => a.textContent?.includes('What is the weather in Paris?'));
          if (streaming && question) (window as any).__both = true;
        }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
      });
      await page.reload();
      await page.locator('article[data-role="ai"][data-status="streaming"]').waitFor();
      // Still held in the weather tool: nothing of the turn is stored yet, and the question shows all the same.
      await page.waitForFunction(() => (window as any).__both === true || !document.querySelector('article[data-role="ai"][data-status="streaming"]'));
      expect(await page.evaluate(() => (window as any).__both)).toBe(true);
      weather.release();
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();
      expect(await messages(page).count()).toBe(2);
    } finally {
      weather.release();
      await context.close();
    }
  });

  it('puts no feedback buttons on a clarification, and keeps them on answers', async () => {
    const user = uniqueUser('web-hitl-feedback');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      await send(page, 'How long is the Aurora warranty?');
      const options = page.getByRole('group', { name: 'Choose an option' });
      await options.waitFor();
      await lastAi(page).and(page.locator('[data-status="complete"][data-message-id]')).waitFor();
      expect(
        await lastAi(page)
          .getByRole('button', { name: /helpful/i })
          .count(),
      ).toBe(0);
      await options.getByRole('button').last().click();
      await page.locator('article[data-role="ai"][data-status="complete"][data-message-id]').nth(1).waitFor();
      const [clarification, answer] = await page.locator('article[data-role="ai"]').all();
      expect(await clarification.getByRole('button', { name: /helpful/i }).count()).toBe(0);
      await answer.getByRole('button', { name: 'Helpful', exact: true }).waitFor();
      await answer.getByRole('button', { name: 'Not helpful', exact: true }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('labels the options of a choice by the documents’ titles (first headings), names their files, and resumes with a chosen title', async () => {
    const user = uniqueUser('web-hitl-titles');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      await send(page, 'How long is the Aurora warranty?');
      const options = page.getByRole('group', { name: 'Choose an option' });
      await options.waitFor();
      const titles = ['Aurora X1 Router — User Manual', 'Aurora X2 Mesh System — User Manual'];
      const buttons = options.getByRole('button');
      expect((await buttons.evaluateAll((all) => all.map((button) => button.getAttribute('aria-label')))).sort()).toEqual(titles);
      // The file shows beneath its title.
      await options.getByRole('button', { name: titles[1], exact: true }).getByText('aurora-x2-mesh-manual.md', { exact: true }).waitFor();

      // In the API too: options are the titles, option_sources the files, in the same order.
      const [session] = (await http().get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions;
      const { pending_hitl } = (await http().get(`/api/sessions/${session.session_id}`).set(t.auth(user)).expect(200)).body;
      expect(pending_hitl.options.slice().sort()).toEqual(titles);
      expect(pending_hitl.option_sources).toEqual(pending_hitl.options.map((title: string) => (title === titles[0] ? 'aurora-x1-router-manual.md' : 'aurora-x2-mesh-manual.md')));
      expect(pending_hitl.clarification_prompt).toContain(titles[0]);

      await options.getByRole('button', { name: titles[1], exact: true }).click();
      const answer = page.locator('article[data-role="ai"][data-status="complete"][data-message-id]').nth(1);
      await answer.waitFor();
      expect(await answer.innerText()).toMatch(/three-year/);
    } finally {
      await context.close();
    }
  });

  it('names each tool an answer used in a chip, while it streams and after a reload (stored with the message)', async () => {
    const user = uniqueUser('web-tool-chips');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    const chips = (article: ReturnType<typeof lastAi>) => article.getByRole('list', { name: 'Tools used' }).getByRole('listitem').allInnerTexts();
    try {
      weather.hold();
      const arrived = weather.nextRequest();
      await send(page, 'What is the weather in Paris?');
      await arrived;
      // Live: the chip shows from the stream's tool event, before the answer is stored.
      const streaming = page.locator('article[data-role="ai"][data-status="streaming"]');
      await streaming.getByRole('list', { name: 'Tools used' }).getByText('get_weather', { exact: true }).waitFor();
      weather.release();
      await lastAi(page).and(page.locator('[data-status="complete"][data-message-id]')).waitFor();
      expect(await chips(lastAi(page))).toEqual(['get_weather']);

      await send(page, 'How long is the Aurora X2 warranty?');
      await page.locator('article[data-role="ai"][data-status="complete"][data-message-id]').nth(1).waitFor();
      expect(await chips(lastAi(page))).toEqual(['knowledge_search']);

      const [session] = (await http().get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions;
      const stored = (await http().get(`/api/sessions/${session.session_id}/messages`).set(t.auth(user)).expect(200)).body.messages;
      expect(stored.map((m: { type: string; tools: string[] }) => [m.type, m.tools])).toEqual([
        ['human', []],
        ['ai', ['get_weather']],
        ['human', []],
        ['ai', ['knowledge_search']],
      ]);
      await page.reload();
      await page.locator('article[data-role="ai"][data-status="complete"][data-message-id]').nth(1).waitFor();
      const [weatherAnswer, knowledgeAnswer] = await page.locator('article[data-role="ai"]').all();
      expect(await chips(weatherAnswer)).toEqual(['get_weather']);
      expect(await chips(knowledgeAnswer)).toEqual(['knowledge_search']);
    } finally {
      weather.release();
      await context.close();
    }
  });

  it('lists the readable documents by title in the empty chat, with example questions drawn from them that ask when clicked', async () => {
    const user = uniqueUser('web-empty-state');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      // What the knowledge base holds for this user, as the API says.
      const listed = (await http().get('/api/knowledge/collections/default/documents').set(t.auth(user)).expect(200)).body.documents as Array<{ title: string }>;
      const titles = listed.map((document) => document.title);
      expect(titles).toEqual(expect.arrayContaining(['Aurora X1 Router — User Manual', '退货与保修政策']));
      const holdings = page.getByRole('list', { name: 'Documents you can ask about' });
      await holdings.waitFor();
      expect((await holdings.getByRole('listitem').allInnerTexts()).map((text) => text.trim()).sort()).toEqual([...titles].sort());

      const examples = page.getByRole('group', { name: 'Example questions' }).getByRole('button');
      await examples.first().waitFor();
      const questions = await examples.allInnerTexts();
      expect(questions.length).toBeGreaterThanOrEqual(2);
      // Each is drawn from a document's title.
      for (const question of questions) expect(titles.some((title) => question.includes(title))).toBe(true);

      await examples.first().click();
      await page.locator('article[data-role="human"]').getByText(questions[0], { exact: true }).waitFor();
      await lastAi(page).and(page.locator('[data-status="complete"]')).waitFor();
    } finally {
      await context.close();
    }
  });

  it('takes a comment with the feedback, stores it with the rating and shows it again after a reload', async () => {
    const user = uniqueUser('web-feedback-comment');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      await send(page, 'How long is the Aurora X2 warranty?');
      const answer = lastAi(page).and(page.locator('[data-status="complete"][data-message-id]'));
      await answer.waitFor();
      await answer.getByRole('button', { name: 'Not helpful', exact: true }).click();
      const box = answer.getByLabel('Comment on this answer (optional)');
      await box.fill('It should say when the warranty starts.');
      await answer.getByRole('button', { name: 'Save comment' }).click();
      await answer.getByText('Comment saved.').waitFor();
      const [session] = (await http().get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions;
      const stored = (await http().get(`/api/sessions/${session.session_id}/messages`).set(t.auth(user)).expect(200)).body.messages;
      expect(stored[1].feedback).toMatchObject({ rating: 'down', comment: 'It should say when the warranty starts.' });
      await page.reload();
      await expect(lastAi(page).getByLabel('Comment on this answer (optional)').inputValue()).resolves.toBe('It should say when the warranty starts.');
      // Changing the rating keeps the comment (the API replaces the whole feedback on every PUT).
      const reloaded = lastAi(page);
      await reloaded.getByRole('button', { name: 'Helpful', exact: true }).click();
      await reloaded.getByRole('button', { name: 'Helpful', exact: true, pressed: true }).waitFor();
      const rerated = (await http().get(`/api/sessions/${session.session_id}/messages`).set(t.auth(user)).expect(200)).body.messages;
      expect(rerated[1].feedback).toMatchObject({ rating: 'up', comment: 'It should say when the warranty starts.' });
    } finally {
      await context.close();
    }
  });

  it('clears the file box after a duplicate upload, and labels both progress bars visibly', async () => {
    const admin = uniqueUser('web-upload-admin');
    const stamp = `${Date.now()}${process.pid}`;
    const file = { name: `duplicate-notes-${stamp}.md`, mimeType: 'text/markdown', buffer: Buffer.from(`# Duplicate notes ${stamp}\n\nThe notes of ${stamp}.`) };
    const { context, page } = await signedInPage(browser, base, t.auth(admin, { role: 'admin' }).Authorization.slice('Bearer '.length));
    try {
      await page.getByRole('button', { name: 'Knowledge base' }).click();
      const box = page.getByLabel('Document file');
      const upload = page.getByRole('button', { name: 'Upload', exact: true });
      await box.setInputFiles(file);
      await upload.click();
      await page
        .getByRole('status')
        .filter({ hasText: `Added ${file.name}` })
        .waitFor();
      expect(await box.evaluate((el) => (el as HTMLInputElement).files?.length)).toBe(0);
      // The same content again: stored already, nothing added; the box is emptied as after a new document.
      await box.setInputFiles({ ...file, name: `again-${file.name}` });
      await upload.click();
      await page.getByRole('status').filter({ hasText: 'is already stored' }).waitFor();
      expect(await box.evaluate((el) => (el as HTMLInputElement).files?.length)).toBe(0);
      expect(await upload.isDisabled()).toBe(true);
      // Each bar has a label one can see (not only a name for screen readers).
      const labels = await page
        .locator('progress')
        .evaluateAll((bars) => bars.map((bar) => [...((bar as HTMLProgressElement).labels ?? [])].map((label) => (label as HTMLElement).innerText.trim())));
      expect(labels).toEqual([['Upload progress'], ['Processing progress']]);
    } finally {
      await context.close();
    }
  });

  it('ends a long title with an ellipsis at a word boundary, the whole title in its tooltip', async () => {
    const user = uniqueUser('web-title');
    const question = 'How do I reset my Aurora X1 router to its factory settings without losing the parental controls?';
    await http().post('/api/chat').set(t.auth(user)).send({ message: question }).expect(200);
    const renamed = uniqueUser('web-title-renamed');
    const long = 'Router notes about the Aurora X1 and X2 mesh systems, their warranty terms, firmware updates and the parental controls';
    const second = await http().post('/api/chat').set(t.auth(renamed)).send({ message: 'Hello' }).expect(200);
    await http().patch(`/api/sessions/${second.body.session_id}`).set(t.auth(renamed)).send({ title: long }).expect(200);

    for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      const { context, page } = await signedInPage(browser, base, tokenOf(user), viewport);
      try {
        if (viewport === VIEWPORTS.phone) await page.getByRole('button', { name: 'Sessions', exact: true }).click();
        const title = page.getByRole('navigation', { name: 'Sessions' }).locator('.session-title').first();
        await title.waitFor();
        const shown = await title.innerText();
        expect(shown.endsWith('…')).toBe(true);
        const kept = shown.slice(0, -1).trimEnd();
        expect(question.startsWith(kept)).toBe(true);
        expect(question[kept.length]).toBe(' '); // cut between words, not inside one
        expect(Array.from(shown).length).toBeLessThanOrEqual(61);
        expect(await title.getAttribute('title')).toBe(shown);
      } finally {
        await context.close();
      }
      // A renamed title longer than the sidebar: one line, cut with an ellipsis by the browser, the whole of it in the tooltip.
      const other = await signedInPage(browser, base, tokenOf(renamed), viewport);
      try {
        if (viewport === VIEWPORTS.phone) await other.page.getByRole('button', { name: 'Sessions', exact: true }).click();
        const title = other.page.getByRole('navigation', { name: 'Sessions' }).locator('.session-title').first();
        await title.waitFor();
        expect(await title.getAttribute('title')).toBe(long);
        const box = await title.evaluate((el) => {
          const style = getComputedStyle(el);
          return { overflow: style.textOverflow, wrap: style.whiteSpace, clipped: el.scrollWidth > el.clientWidth, fontSize: parseFloat(style.fontSize), height: el.clientHeight };
        });
        expect(box).toMatchObject({ overflow: 'ellipsis', wrap: 'nowrap', clipped: true });
        expect(box.height).toBeLessThan(2 * box.fontSize); // one line
      } finally {
        await other.context.close();
      }
    }
  });

  it('keeps the whole user name in the 375 px header, nothing overlapping or out of the screen', async () => {
    for (const [user, claims] of [
      ['alice.martin@example.com', {}],
      [`a-much-longer-user-name-${uniqueUser('admin')}`, { role: 'admin' }],
    ] as const) {
      const { context, page } = await signedInPage(browser, base, t.auth(user, claims).Authorization.slice('Bearer '.length), VIEWPORTS.phone);
      try {
        const who = page.getByTestId('signed-in-as');
        await who.filter({ hasText: user }).waitFor();
        const header = await page.locator('header.topbar').evaluate((el) => {
          const boxes = [...el.children].map((child) => child.getBoundingClientRect());
          const overlaps = boxes.some((a, i) => boxes.some((b, j) => j > i && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom));
          const name = el.querySelector('[data-testid="signed-in-as"]') as HTMLElement;
          return {
            overlaps,
            overflowing: el.scrollWidth > el.clientWidth,
            nameClipped: name.scrollWidth > name.clientWidth || name.scrollHeight > name.clientHeight,
            outside: boxes.some((r) => r.left < 0 || r.right > window.innerWidth),
          };
        });
        expect(header).toEqual({ overlaps: false, overflowing: false, nameClipped: false, outside: false });
        expect(await who.innerText()).toContain(user);
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        await page.getByRole('button', { name: 'Knowledge', exact: true }).waitFor();
      } finally {
        await context.close();
      }
    }
  });

  it('says why a refused token was refused (a malformed one is not "expired") and keeps what was typed', async () => {
    const user = uniqueUser('web-bad-token');
    const { context, page } = await signedInPage(browser, base, tokenOf(user));
    try {
      await emptyChatLoaded(page);
      const box = page.getByLabel('Message', { exact: true });
      await box.fill('A question I do not want to type twice');
      // The token goes bad under the page (pasted wrong, edited): the next call is refused.
      await page.evaluate(() => sessionStorage.setItem('agentic-rag.token', 'not-a-jwt'));
      await box.press('Enter');
      const notice = page.getByRole('alert');
      await notice.waitFor();
      const text = await notice.innerText();
      expect(text).toContain('Invalid token: signature or format rejected');
      expect(text).not.toMatch(/expired or was revoked/);
      await page.getByLabel('Bearer token').fill(tokenOf(user));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect(page.getByLabel('Message', { exact: true }).inputValue()).resolves.toBe('A question I do not want to type twice');

      // A malformed token pasted at sign-in: refused with its reason, no promise of kept text where there was none.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').fill('abc.def');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Invalid token' }).waitFor();
      expect(await page.getByRole('alert').innerText()).not.toMatch(/expired or was revoked|typing is kept/);
    } finally {
      await context.close();
    }
  });
});

describeWithChromium('the web client, with a fake model: rough edges', () => {
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

  it('says once that a stopped turn was stopped, on its kept partial answer, and the same after a reload', async () => {
    llm.play({ content: 'Hello there, this answer is going to be cut short.', hangAfter: 3 });
    const user = uniqueUser('web-stop-label');
    const { context, page } = await signedInPage(browser, base, t.auth(user).Authorization.slice('Bearer '.length));
    try {
      await send(page, 'Say hello');
      await page.locator('article[data-role="ai"][data-status="streaming"]').getByText('Hello there, this').waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.locator('article[data-role="ai"][data-status="cancelled"][data-message-id]').waitFor();
      const notes = async () => page.locator('.status-note').allInnerTexts();
      expect(await notes()).toEqual(['Stopped — the answer is incomplete.']);
      expect(await page.locator('article[data-role="ai"] .status-note').count()).toBe(1);
      await page.reload();
      await page.locator('article[data-role="ai"][data-status="cancelled"][data-message-id]').waitFor();
      expect(await notes()).toEqual(['Stopped — the answer is incomplete.']);
      expect(await page.locator('article[data-role="ai"] .status-note').count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
