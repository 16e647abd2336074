import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import type { Browser } from 'playwright-core';
import { describeWithChromium, launchChromium, pageErrors, signedInPage } from './support/browser.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const run = promisify(execFile);

/**
 * A copy of the web client built with VITE_API_BASE and hosted on another
 * origin (a plain static server), calling the API through CORS.
 */
describeWithChromium('web client hosted on another origin (VITE_API_BASE)', () => {
  let browser: Browser;
  let t: TestApp;
  let api: string;
  let site: http.Server;
  let siteUrl: string;
  const outDir = mkdtempSync(path.join(tmpdir(), 'web-cross-origin-'));

  beforeAll(async () => {
    // The site's origin must be known before the API starts (CORS_ORIGINS): take a port first.
    const app = express();
    site = http.createServer(app);
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    t = await createTestApp({ CORS_ORIGINS: siteUrl, WEB_CLIENT_ENABLED: 'false' });
    api = await t.listen();
    await run('npx', ['vite', 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'], {
      cwd: path.resolve('web'),
      env: { ...process.env, VITE_API_BASE: api },
    });
    app.use(express.static(outDir));
    app.get('/{*any}', (_req, res) => res.sendFile(path.join(outDir, 'index.html')));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => site?.close(resolve));
    rmSync(outDir, { recursive: true, force: true });
  });

  it('does a streamed turn against the API on its origin', async () => {
    const user = uniqueUser('web-cors');
    const { context, page } = await signedInPage(browser, siteUrl, t.auth(user).Authorization.replace('Bearer ', ''));
    const errors = pageErrors(page);
    await page.getByLabel('Message').fill('How long is the Aurora X2 warranty?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]').filter({ hasText: 'three-year' }).waitFor();
    // The turn is stored under the user on the API's side.
    const sessions = (await fetch(`${api}/api/sessions`, { headers: t.auth(user) }).then((r) => r.json())) as { sessions: unknown[] };
    expect(sessions.sessions).toHaveLength(1);
    expect(new URL(page.url()).origin).toBe(siteUrl);
    expect(errors).toEqual([]);
    await context.close();
  });
});
