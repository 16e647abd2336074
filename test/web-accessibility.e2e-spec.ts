import type { Page } from 'playwright-core';
import { appInChromium, describeWithChromium, signedInPage, VIEWPORTS, overflowing } from './support/browser.js';
import { createCollection, uploadTo } from './support/collections.js';
import { uniqueUser } from './support/test-app.js';

/** Accessibility of the web client: a whole session by keyboard alone, and the dense screens at 375 px. */

const composer = (page: Page) => page.getByLabel('Message', { exact: true });

describeWithChromium('web client: keyboard only and narrow screens', () => {
  const app = appInChromium({ RATE_LIMIT_CHAT_PER_MINUTE: '0' });

  /** Presses Tab until the focused element matches `test` (at most `limit` presses); the accessible name of what has focus. */
  async function tabTo(page: Page, test: (el: { tag: string; name: string }) => boolean, limit = 60, back = false): Promise<boolean> {
    for (let i = 0; i < limit; i += 1) {
      await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
      const el = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        const label = a?.id ? document.querySelector(`label[for="${a.id}"]`)?.textContent : null;
        return { tag: a?.tagName ?? '', name: (a?.getAttribute('aria-label') ?? label ?? a?.textContent ?? '').trim() };
      });
      if (test(el)) return true;
    }
    return false;
  }

  it('does a whole turn, opens and closes the trace, answers a HITL question and deletes a session with the keyboard only', async () => {
    const user = uniqueUser('review-keys');
    const { context, page } = await signedInPage(app.browser, app.base, app.tokenOf(user));
    try {
      await composer(page).waitFor();
      await page.locator('body').focus();
      expect(await tabTo(page, (el) => el.tag === 'TEXTAREA')).toBe(true);
      await page.keyboard.type('How long is the Aurora X2 warranty?');
      await page.keyboard.press('Enter');
      await page.locator('article[data-role="ai"][data-status="complete"]').getByRole('button', { name: 'Show trace' }).waitFor();
      expect(await tabTo(page, (el) => el.name === 'Show trace', 60, true)).toBe(true);
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: 'Trace' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog', { name: 'Trace' }).waitFor({ state: 'detached' });
      expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Show trace');

      // HITL by keyboard.
      expect(await tabTo(page, (el) => el.tag === 'TEXTAREA')).toBe(true);
      await page.keyboard.type('How long is the Aurora warranty?');
      await page.keyboard.press('Enter');
      await page.getByRole('group', { name: 'Choose an option' }).waitFor();
      expect(await tabTo(page, (el) => el.name === 'Aurora X2 Mesh System — User Manual', 60, true)).toBe(true);
      await page.keyboard.press('Enter');
      await page.getByRole('group', { name: 'Choose an option' }).waitFor({ state: 'detached' });
      await page
        .locator('article[data-role="ai"][data-status="complete"]')
        .last()
        .getByText(/three-year/)
        .waitFor();

      // Delete the session by keyboard.
      expect(await tabTo(page, (el) => el.name === 'Delete', 80, true)).toBe(true);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Delete session' });
      await dialog.waitFor();
      expect(await tabTo(page, (el) => el.name === 'Delete', 4)).toBe(true);
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Sessions' }).getByText('No conversations yet.').waitFor();
    } finally {
      await context.close();
    }
  });

  it('the trace dialog and the knowledge admin fit 375 px', async () => {
    const admin = uniqueUser('review-narrow');
    const { context, page } = await signedInPage(app.browser, app.base, app.t.auth(admin, { role: 'admin' }).Authorization.slice('Bearer '.length), VIEWPORTS.phone);
    try {
      await composer(page).fill('How long is the Aurora X2 warranty?');
      await composer(page).press('Enter');
      await page.locator('article[data-role="ai"][data-status="complete"]').getByRole('button', { name: 'Show trace' }).last().click();
      await page.getByRole('dialog', { name: 'Trace' }).waitFor();
      const trace = await overflowing(page);
      await page.getByRole('dialog', { name: 'Trace' }).getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'Knowledge base' }).click();
      await page.getByLabel('Test query').fill('warranty');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByTestId('candidate').first().waitFor();
      expect({ trace, admin: await overflowing(page) }).toEqual({ trace: [], admin: [] });
    } finally {
      await context.close();
    }
  });

  it('the Knowledge screen, a collection, the collection picker (by keyboard) and the source panel fit 375 px', async () => {
    const userId = uniqueUser('review-knowledge');
    const auth = app.t.auth(userId);
    const name = `Review notes of ${userId}`;
    const collection = await createCollection(app.t, auth, name, 'A description long enough to wrap on a phone screen, twice over at least.');
    await uploadTo(app.t, auth, collection.id, `${userId}-notes.md`, '# Notes\n\nThe review notes say the lantern room opens at dawn.');
    const { context, page } = await signedInPage(app.browser, app.base, app.tokenOf(userId), VIEWPORTS.phone);
    try {
      await page.getByRole('button', { name: 'Knowledge', exact: true }).click();
      await page.getByRole('button', { name }).waitFor();
      const list = await overflowing(page);
      await page.getByRole('button', { name }).click();
      await page.locator('tr[data-testid="document"]').waitFor();
      await page.getByRole('region', { name: 'Sharing' }).locator('[data-testid="access-entry"]').waitFor();
      const detail = await overflowing(page);

      // The picker by keyboard: its toggle, then Tab past "All" to the first collection, Space ticks it.
      await page.getByRole('button', { name: 'Chat', exact: true }).click();
      await composer(page).waitFor();
      await page.locator('body').focus();
      expect(await tabTo(page, (el) => el.name.startsWith('Searching:'))).toBe(true);
      await page.keyboard.press('Enter');
      await page.getByRole('checkbox', { name: /^default/ }).waitFor();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Space');
      expect(await page.getByRole('checkbox', { name: /^default/ }).isChecked()).toBe(true);
      const picker = await overflowing(page);

      await composer(page).fill('How long is the Aurora X2 warranty?');
      await composer(page).press('Enter');
      const citation = page.locator('article[data-role="ai"][data-status="complete"] button.citation').first();
      await citation.click();
      const panel = page.getByRole('dialog', { name: 'Source' });
      await panel.locator('mark[data-cited="true"]').waitFor();
      // Focus moved into the panel; Escape closes it and gives focus back to the citation.
      expect(await panel.evaluate((el) => el.contains(document.activeElement))).toBe(true);
      const source = await overflowing(page);
      await page.keyboard.press('Escape');
      await panel.waitFor({ state: 'detached' });
      expect(await citation.evaluate((el) => el === document.activeElement)).toBe(true);
      expect({ list, detail, picker, source }).toEqual({ list: [], detail: [], picker: [], source: [] });
    } finally {
      await context.close();
    }
  });
});
