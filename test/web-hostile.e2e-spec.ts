// What a hostile review of the web client found: each test failed before its fix.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { JwtService } from '@nestjs/jwt';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { WEB_CLIENT_DIR } from '../src/web-client.module.js';
import { appInChromium, describeWithChromium, emptyChatLoaded, pageErrors, signedInPage, VIEWPORTS, overflowing } from './support/browser.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

if (!existsSync(path.join(WEB_CLIENT_DIR, 'index.html'))) {
  throw new Error(`The web client is not built (${WEB_CLIENT_DIR}); run npm run -w clients/typescript build && npm run -w web build`);
}

/** A well-formed token the service refuses (signed with another secret): what an expired or revoked token gets, a 401. */
const refusedToken = (user: string) => new JwtService({ secret: 'not-the-service-secret' }).sign({ sub: user }, { algorithm: 'HS256', expiresIn: '1h' });

/** A page signed in with `token`, opened at `url` (an address with a `#session=` fragment, say). */
async function pageAt(browser: Browser, url: string, token: string, viewport: { width: number; height: number } = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport });
  await context.addInitScript((value) => {
    if (!sessionStorage.getItem('agentic-rag.token')) sessionStorage.setItem('agentic-rag.token', value);
  }, token);
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(url);
  return { context, page, errors };
}

const composer = (page: Page) => page.getByLabel('Message', { exact: true });

describeWithChromium('web client review: hostile content and addresses', () => {
  const app = appInChromium({ RATE_LIMIT_CHAT_PER_MINUTE: '0' });

  it('an address with a malformed #session= escape still opens a usable chat (composer shown, no uncaught error)', async () => {
    const user = uniqueUser('review-hash');
    const { context, page, errors } = await pageAt(app.browser, `${app.base}/#session=%E0%A4%A`, app.tokenOf(user));
    try {
      await page.getByRole('navigation', { name: 'Sessions' }).getByText('No conversations yet.').waitFor();
      await composer(page).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("an address naming another user's session does not leave the composer sending into it forever", async () => {
    const owner = uniqueUser('review-owner');
    const id = randomUUID();
    await app.t.storage.appendTurn(owner, id, [
      { type: 'human', content: 'Private question' },
      { type: 'ai', content: 'Private answer' },
    ]);
    const intruder = uniqueUser('review-intruder');
    const { context, page } = await pageAt(app.browser, `${app.base}/#session=${id}`, app.tokenOf(intruder));
    try {
      // The page gives up the address it cannot open and starts a new chat.
      await page.waitForFunction(() => !window.location.hash.includes('session='));
      expect(await page.getByText('Private answer').count()).toBe(0);
      await composer(page).fill('How long is the Aurora X2 warranty?');
      await composer(page).press('Enter');
      // Either the page started a new chat for this user, or it keeps refusing: wait for whichever happens.
      await page.waitForFunction(
        () =>
          document.querySelector('article[data-role="ai"][data-status="complete"]') ||
          [...document.querySelectorAll('[role="alert"]')].some((a) => /not found|session/i.test(a.textContent ?? '')),
      );
      const answered = await page.locator('article[data-role="ai"][data-status="complete"]').count();
      const alerts = await page.getByRole('alert').allInnerTexts();
      expect({ answered, alerts }).toEqual({ answered: 1, alerts: [] });
    } finally {
      await context.close();
    }
  });

  it('a 401 while sending (token expired or revoked) says why on the sign-in page and keeps the typed text', async () => {
    const user = uniqueUser('review-401');
    const { context, page } = await signedInPage(app.browser, app.base, app.tokenOf(user));
    try {
      await emptyChatLoaded(page);
      const typed = 'A long question I do not want to type again';
      await composer(page).fill(typed);
      // The token stops being accepted (as when it expires): the next request is refused with a 401.
      await page.evaluate((bad) => sessionStorage.setItem('agentic-rag.token', bad), refusedToken(user));
      await composer(page).press('Enter');
      await page.getByLabel('Bearer token').waitFor();
      const told = await page.getByRole('alert').allInnerTexts();
      await page.getByLabel('Bearer token').fill(app.tokenOf(user));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await composer(page).waitFor();
      expect({ toldWhy: told.some((m) => /expired|sign in again|not signed in/i.test(m)), kept: await composer(page).inputValue() }).toEqual({
        toldWhy: true,
        kept: typed,
      });
    } finally {
      await context.close();
    }
  });

  it('a 401 in the knowledge admin goes back to sign-in, as it does in the chat', async () => {
    const admin = uniqueUser('review-admin-401');
    const { context, page } = await signedInPage(app.browser, app.base, app.t.auth(admin, { role: 'admin' }).Authorization.slice('Bearer '.length));
    try {
      await page.getByRole('button', { name: 'Knowledge base' }).click();
      await page.getByLabel('Test query').waitFor();
      await page.getByRole('table', { name: 'Documents', exact: true }).waitFor(); // its listing's last page is in: no load is under way
      await page.evaluate((bad) => sessionStorage.setItem('agentic-rag.token', bad), refusedToken(admin));
      await page.getByLabel('Test query').fill('warranty');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForFunction(() => document.querySelector('#token') || document.querySelector('[role="alert"]'));
      expect(await page.getByLabel('Bearer token').count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});

describeWithChromium('web client review: wide answers at 375 px and 1440 px', () => {
  const app = appInChromium({ RATE_LIMIT_CHAT_PER_MINUTE: '0' });

  it.each([
    ['375 px', VIEWPORTS.phone],
    ['1440 px', VIEWPORTS.desktop],
  ] as const)('at %s an answer with a long code line or a wide table scrolls inside itself, not the whole page', async (_name, viewport) => {
    const user = uniqueUser('review-wide');
    const id = randomUUID();
    const code = 'const answer = ' + Array.from({ length: 40 }, (_, i) => `value${i}`).join(' + ') + ';';
    await app.t.storage.appendTurn(user, id, [
      { type: 'human', content: 'Show me code' },
      {
        type: 'ai',
        content: `Here:\n\n\`\`\`ts\n${code}\n\`\`\`\n\n| ${Array.from({ length: 12 }, (_, i) => `column ${i}`).join(' | ')} |\n|${'---|'.repeat(12)}\n| ${Array.from({ length: 12 }, () => 'value').join(' | ')} |`,
      },
    ]);
    const { context, page } = await pageAt(app.browser, `${app.base}/#session=${id}`, app.tokenOf(user), viewport);
    try {
      await page.locator('article[data-role="ai"] pre').waitFor();
      expect({ pageWidth: await page.evaluate(() => document.documentElement.scrollWidth), overflowing: await overflowing(page) }).toEqual({
        pageWidth: viewport.width,
        overflowing: [],
      });
    } finally {
      await context.close();
    }
  });
});

describe('web client review: the page route must not answer API-looking paths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it.each(['/assets/index-missing.js', '/API/nothing-here', '/Api/sessions/x/y', '/V1/nothing', '/HEALTH/x', '/api%2Fnothing-here', '/%61pi/nothing-here', '//api/nothing-here'])(
    '%s is a JSON 404, not the page',
    async (route) => {
      const response = await request(t.app.getHttpServer())
        .get(route)
        .set(t.auth(uniqueUser('review-route')));
      expect({ status: response.status, html: /text\/html/.test(String(response.headers['content-type'])) }).toEqual({ status: 404, html: false });
    },
  );

  it('the page served at / may call only its own origin (connect-src is not *)', async () => {
    const response = await request(t.app.getHttpServer()).get('/').expect(200);
    const connect = /connect-src ([^;]+)/.exec(String(response.headers['content-security-policy']))?.[1] ?? '';
    expect(connect.split(/\s+/)).not.toContain('*');
  });
});

describe('web client review: development sign-in', () => {
  it('mints a token the same service accepts when JWT_MAX_LIFETIME_SECONDS is below 8 hours', async () => {
    const t = await createTestApp({ NODE_ENV: 'development', JWT_SECRET: '', JWT_MAX_LIFETIME_SECONDS: '3600' });
    try {
      const minted = await request(t.app.getHttpServer())
        .post('/api/dev/token')
        .send({ sub: uniqueUser('review-dev') })
        .expect(200);
      const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set('Authorization', `Bearer ${minted.body.token}`);
      expect(sessions.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('web client review: the typed client is the only way the page calls the API', () => {
  it("web/src has no fetch() of its own (the upload's XMLHttpRequest is the one allowed exception)", async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const root = path.resolve('web', 'src');
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => /\.tsx?$/.test(f));
    const offenders = files.filter((f) => /\bfetch\(/.test(readFileSync(path.join(root, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
