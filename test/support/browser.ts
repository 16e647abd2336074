/// <reference lib="dom" />
// page.evaluate callbacks run in the browser: the test compilation knows DOM names (src/ does not use this file).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from './test-app.js';

/** Debian's chromium package; browser downloads do not work on these machines. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumAvailable = existsSync(CHROMIUM);

/** `describe` when chromium is there (or .ci/run installed it and sets REQUIRE_CHROMIUM=1, so a missing one fails), else skipped with a warning. */
export const describeWithChromium = chromiumAvailable || process.env.REQUIRE_CHROMIUM === '1' ? describe : describe.skip;
if (!chromiumAvailable) {
  console.warn(`\n*** ${CHROMIUM} not found: browser tests are SKIPPED. Install it with: apt-get install -y chromium ***\n`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** The widths every screen is captured at (the desktop and phone). */
export const VIEWPORTS = { desktop: { width: 1440, height: 900 }, phone: { width: 375, height: 812 } } as const;

/** Where the tests write their screenshots (named in docs/web-client.md). */
export const SCREENSHOT_DIR = path.resolve('docs', 'screenshots');

/**
 * How long one Playwright wait may take before it fails naming what it waited for (Playwright's own default is 30 s).
 * The tests wait for events: on a loaded machine an event comes late, not never; Jest's testTimeout stops a hang.
 */
export const BROWSER_WAIT_MS = 100_000;

/** A page of the web client at `base`, signed in with `token` (kept in session storage, as the sign-in form keeps it). */
export async function signedInPage(
  browser: Browser,
  base: string,
  token: string,
  viewport: { width: number; height: number } = VIEWPORTS.desktop,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(BROWSER_WAIT_MS);
  await context.addInitScript((value) => {
    if (!sessionStorage.getItem('agentic-rag.token')) sessionStorage.setItem('agentic-rag.token', value);
  }, token);
  const page = await context.newPage();
  await page.goto(base);
  return { context, page };
}

/**
 * Waits until a new user's empty chat has finished loading: the session list ("No conversations yet.") and the
 * empty state's documents (fetched after the collections). A test that swaps the token under the page waits for
 * this first, so the next call to carry the bad token is the one the test makes, not a load still under way.
 */
export async function emptyChatLoaded(page: Page): Promise<void> {
  // Attached, not visible: at phone width the session list is in a closed drawer.
  await page.getByRole('navigation', { name: 'Sessions' }).getByText('No conversations yet.').waitFor({ state: 'attached' });
  await page.getByRole('list', { name: 'Documents you can ask about' }).or(page.getByText('The knowledge base holds no document you can read yet.')).waitFor();
}

/** Writes `docs/screenshots/<name>-<width>.png` of the page as it is now. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: false });
}

/** Collects the page's uncaught errors and console errors, so a test can assert there were none. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return errors;
}

/**
 * The app listening on a free port and a Chromium, for one describe block:
 * started in its beforeAll, closed in its afterAll. Read them after start.
 */
export function appInChromium(env: Record<string, string> = {}): { t: TestApp; base: string; browser: Browser; tokenOf(user: string): string } {
  const suite = {
    t: undefined as unknown as TestApp,
    base: '',
    browser: undefined as unknown as Browser,
    /** A bearer token for `user`, without its "Bearer " prefix. */
    tokenOf: (user: string) => suite.t.auth(user).Authorization.slice('Bearer '.length),
  };
  beforeAll(async () => {
    suite.t = await createTestApp(env);
    suite.base = await suite.t.listen();
    suite.browser = await launchChromium();
  }, 60000);
  afterAll(async () => {
    await suite.browser?.close();
    await suite.t?.close();
  });
  return suite;
}

/** Elements of the page reaching past the window's right edge (scrolling boxes such as pre and tables excepted inside). */
export const overflowing = (page: Page) =>
  page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll<HTMLElement>('body *')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && r.right > width + 1 && !el.parentElement?.closest('pre, table, .admin-table-wrap');
      })
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} ${Math.round(el.getBoundingClientRect().width)}px`)
      .slice(0, 4);
  });
