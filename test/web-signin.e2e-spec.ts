import type { Browser } from 'playwright-core';
import { describeWithChromium, launchChromium, pageErrors, screenshot, VIEWPORTS } from './support/browser.js';
import { createCollection, setAccess } from './support/collections.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

describeWithChromium('web client: signing in', () => {
  let browser: Browser;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    browser = await launchChromium();
    t = await createTestApp();
    base = await t.listen();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with a pasted token, keeps it for the tab only, and signs out', async () => {
    for (const viewport of Object.values(VIEWPORTS)) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const errors = pageErrors(page);
      await page.goto(base);
      await page.getByLabel('Bearer token').waitFor();
      await screenshot(page, 'signin');
      const user = uniqueUser('web-signin');
      const header = t.auth(user).Authorization;
      await page.getByLabel('Bearer token').fill(header);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByTestId('signed-in-as').filter({ hasText: user }).waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('agentic-rag.token'))).toBe(header.replace('Bearer ', ''));
      await page.reload();
      await page.getByTestId('signed-in-as').filter({ hasText: user }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Bearer token').waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('agentic-rag.token'))).toBeNull();
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('says "sign in as" exists only in development when the service is not', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    await page.getByLabel('User id').fill('alice');
    await page.getByRole('button', { name: 'Sign in as' }).click();
    await page.getByRole('alert').filter({ hasText: 'only exists when the service runs in development mode' }).waitFor();
    await page.close();
  });
});

describeWithChromium('web client: "sign in as" in development', () => {
  let browser: Browser;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    browser = await launchChromium();
    t = await createTestApp({ NODE_ENV: 'development', JWT_SECRET: '' });
    base = await t.listen();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('mints a token for the user id typed, as an administrator when ticked', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    const user = uniqueUser('web-dev');
    await page.getByLabel('User id').fill(user);
    await page.getByLabel('administrator').check();
    await page.getByRole('button', { name: 'Sign in as' }).click();
    await page
      .getByTestId('signed-in-as')
      .filter({ hasText: `${user} (admin)` })
      .waitFor();
    await page.getByRole('button', { name: 'Knowledge base' }).waitFor();
    await page.close();
  });

  it('mints a token in the groups typed: a collection shared with one of them is listed in the Knowledge screen', async () => {
    const ownerId = uniqueUser('web-dev-owner');
    const owner = t.auth(ownerId);
    const group = `dev-group-${Date.now().toString(36)}`;
    const shared = await createCollection(t, owner, `Shared with ${group}`);
    await setAccess(t, owner, shared.id, [
      { principal: `user:${ownerId}`, role: 'owner' },
      { principal: `group:${group}`, role: 'editor' },
    ]);
    const page = await browser.newPage();
    await page.goto(base);
    await page.getByLabel('User id').fill(uniqueUser('web-dev-member'));
    await page.getByLabel('Groups (optional, separated by commas)').fill(` other , ${group} `);
    await page.getByRole('button', { name: 'Sign in as' }).click();
    await page.getByRole('button', { name: 'Knowledge', exact: true }).click();
    const row = page.locator(`tr[data-testid="collection"][data-collection-id="${shared.id}"]`);
    await row.waitFor();
    expect(await row.locator('[data-testid="role"]').innerText()).toBe('editor');
    await page.close();
  });
});
