import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';
import { WEB_CLIENT_DIR } from '../src/web-client.module.js';
import { adminAuth } from './support/admin.js';
import { appInChromium, describeWithChromium, pageErrors, screenshot, signedInPage, VIEWPORTS, overflowing } from './support/browser.js';
import { createCollection, groupAuth, type Headers, setAccess, uploadTo } from './support/collections.js';
import { uniqueUser } from './support/test-app.js';

if (!existsSync(path.join(WEB_CLIENT_DIR, 'index.html'))) {
  throw new Error(`The web client is not built (${WEB_CLIENT_DIR}); run npm run -w clients/typescript build && npm run -w web build`);
}

const tokenOf = (auth: Headers) => auth.Authorization.slice('Bearer '.length);

/**
 * A document whose sections are leaves of their own (so the cited one has neighbours), one of them holding a fact no
 * other document has: the vault's passphrase.
 */
function vaultDocument(secret: string, tag: string): string {
  const filler = (topic: string, i: number) => `Rule ${i} of archive ${tag} covers ${topic} and is written here in full for the staff. `.repeat(11);
  return [
    `# Archive ${tag}`,
    `## Arrival\n\n${filler('arrival at the front desk', 1)}`,
    `## Lighting\n\n${filler('lighting of the reading rooms', 2)}`,
    `## Quillfeather vault\n\nThe Quillfeather vault opens with the passphrase ${secret}. Only the finance team may open the Quillfeather vault.`,
    `## Departure\n\n${filler('departure and the closing bell', 4)}`,
    `## Storms\n\n${filler('storm shutters on the windows', 5)}`,
  ].join('\n\n');
}

const QUESTION = 'Which passphrase opens the Quillfeather vault?';

/** Sends a message through the composer and waits for the turn's answer to be complete; returns the answer's article. */
async function ask(page: Page, question: string) {
  const done = page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]');
  const before = await done.count();
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(question);
  await box.press('Enter');
  await done.nth(before).waitFor();
  return done.nth(before);
}

/** Opens the Knowledge screen and waits for its list of collections. */
async function openKnowledge(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Knowledge', exact: true }).click();
  await page.locator('tr[data-testid="collection"]').first().waitFor();
}

const collectionRow = (page: Page, id: string) => page.locator(`tr[data-testid="collection"][data-collection-id="${id}"]`);

describeWithChromium('web client: knowledge collections, the collection picker and citations that open their source (Chromium)', () => {
  const app = appInChromium({ RATE_LIMIT_CHAT_PER_MINUTE: '0', RATE_LIMIT_UPLOAD_PER_MINUTE: '0' });
  const api = () => request(app.t.app.getHttpServer());

  /** The stored session (its saved collections), as GET /api/sessions/:id and the sessions list answer it. */
  async function storedSession(as: Headers, sessionId: string): Promise<{ collection_ids: string[] | null }> {
    const one = (await api().get(`/api/sessions/${sessionId}`).set(as).expect(200)).body;
    const listed = (await api().get('/api/sessions').set(as).expect(200)).body.sessions.find((s: { session_id: string }) => s.session_id === sessionId);
    expect(listed.collection_ids).toEqual(one.collection_ids);
    return one;
  }

  it('alice creates a collection, uploads and shares it with group finance; carol reads it read-only and her answer cites it in the source panel; bob sees nothing', async () => {
    const tag = randomUUID().slice(0, 8);
    const secret = `marigold${tag}zephyr`;
    const filename = `archive-${tag}.md`;
    const name = `Archive ${tag}`;
    const aliceId = uniqueUser('web-alice');
    const alice = app.t.auth(aliceId);
    const carol = groupAuth(app.t, uniqueUser('web-carol'), ['finance']);
    const bob = app.t.auth(uniqueUser('web-bob'));

    // Alice, at 1440 px: create, upload with progress, share with group:finance as viewer.
    const a = await signedInPage(app.browser, app.base, tokenOf(alice), VIEWPORTS.desktop);
    const aliceErrors = pageErrors(a.page);
    let collectionId: string;
    try {
      await openKnowledge(a.page);
      await a.page.getByLabel('Name', { exact: true }).fill(name);
      await a.page.getByLabel('Description', { exact: true }).fill('Rules of the archive, for the finance team.');
      await a.page.getByRole('button', { name: 'Create collection' }).click();
      await a.page.getByRole('heading', { name, exact: true }).waitFor();
      const created = (await api().get('/api/knowledge/collections').set(alice).expect(200)).body.collections.find((c: { name: string }) => c.name === name);
      expect(created).toMatchObject({ role: 'owner', owner: aliceId, description: 'Rules of the archive, for the finance team.', document_count: 0 });
      collectionId = created.id;

      await a.page.getByLabel('Document file').setInputFiles({ name: filename, mimeType: 'text/markdown', buffer: Buffer.from(vaultDocument(secret, tag)) });
      await a.page.getByRole('button', { name: 'Upload' }).click();
      await a.page.getByLabel('Upload progress').waitFor();
      await a.page
        .getByRole('status')
        .filter({ hasText: `Added ${filename}` })
        .waitFor();
      const [value, max] = await a.page.getByLabel('Upload progress').evaluate((el) => [(el as HTMLProgressElement).value, (el as HTMLProgressElement).max]);
      expect(value).toBe(max);
      await a.page.locator(`tr[data-testid="document"][data-filename="${filename}"]`).waitFor();
      const documents = (await api().get(`/api/knowledge/collections/${collectionId}/documents`).set(alice).expect(200)).body.documents;
      expect(documents.map((d: { filename: string; collection_id: string }) => [d.filename, d.collection_id])).toEqual([[filename, collectionId]]);

      const sharing = a.page.getByRole('region', { name: 'Sharing' });
      await sharing.getByLabel('Share with').selectOption('group');
      await sharing.getByLabel('Group name').fill('finance');
      await sharing.getByLabel('Role', { exact: true }).selectOption('viewer');
      await sharing.getByRole('button', { name: 'Add' }).click();
      await sharing.locator('[data-testid="access-entry"][data-principal="group:finance"][data-role="viewer"]').waitFor();
      expect((await api().get(`/api/knowledge/collections/${collectionId}/access`).set(alice).expect(200)).body.entries).toEqual([
        { principal: `user:${aliceId}`, role: 'owner' },
        { principal: 'group:finance', role: 'viewer' },
      ]);
      // The last owner cannot be removed: the service's 409 collection_owner_required, in plain words.
      await sharing.getByRole('button', { name: `Remove user ${aliceId}` }).click();
      await sharing.getByRole('alert').filter({ hasText: 'A collection must keep at least one owner' }).waitFor();
      expect(await sharing.locator('[data-testid="access-entry"]').count()).toBe(2);
      await screenshot(a.page, 'knowledge-collection');

      await a.page.getByRole('button', { name: '← All collections' }).click();
      const row = collectionRow(a.page, collectionId);
      await row.locator('[data-testid="document-count"]', { hasText: /^1$/ }).waitFor();
      expect(await row.locator('[data-testid="role"]').innerText()).toBe('owner');
      await screenshot(a.page, 'knowledge-collections');
      expect(aliceErrors.filter((e) => !/status of 409/.test(e))).toEqual([]);
    } finally {
      await a.context.close();
    }

    // Carol (group finance), at 375 px: listed as viewer with its one document; read-only inside.
    const c = await signedInPage(app.browser, app.base, tokenOf(carol), VIEWPORTS.phone);
    const carolErrors = pageErrors(c.page);
    try {
      await openKnowledge(c.page);
      const row = collectionRow(c.page, collectionId);
      expect(await row.locator('[data-testid="role"]').innerText()).toBe('viewer');
      expect(await row.locator('[data-testid="document-count"]').innerText()).toBe('1');
      expect(await collectionRow(c.page, DEFAULT_COLLECTION_ID).locator('[data-testid="role"]').innerText()).toBe('viewer');
      await screenshot(c.page, 'knowledge-collections');
      await row.getByRole('button', { name }).click();
      await c.page.getByRole('heading', { name, exact: true }).waitFor();
      await c.page.locator(`tr[data-testid="document"][data-filename="${filename}"]`).waitFor();
      await c.page.getByRole('region', { name: 'Sharing' }).locator('[data-testid="access-entry"][data-principal="group:finance"]').waitFor();
      expect(await c.page.getByTestId('your-role').innerText()).toContain('You can read this collection but not change it.');
      expect(await c.page.getByLabel('Document file').count()).toBe(0);
      expect(await c.page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
      expect(await c.page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
      expect(await c.page.getByRole('button', { name: 'Add' }).count()).toBe(0);
      expect(await c.page.getByRole('button', { name: 'Delete collection' }).count()).toBe(0);
      expect(await c.page.getByLabel('Collection name').count()).toBe(0);
      expect(await overflowing(c.page)).toEqual([]);
      await screenshot(c.page, 'knowledge-collection');

      // Her answer, searching every collection she reads, finds the fact and cites the document.
      await c.page.getByRole('button', { name: 'Chat', exact: true }).click();
      const answer = await ask(c.page, QUESTION);
      expect(await answer.innerText()).toContain(secret);
      const citation = answer.locator('button.citation', { hasText: filename }).first();
      await citation.click();
      const panel = c.page.getByRole('dialog', { name: 'Source' });
      const cited = panel.locator('mark[data-cited="true"][aria-current="true"]');
      await cited.waitFor();
      expect(await panel.getByTestId('source-document').innerText()).toBe(filename);
      expect(await panel.getByTestId('source-collection').innerText()).toBe(name);
      // Where: the heading path the passage starts under (a Markdown file has no pages).
      expect(await panel.getByTestId('source-place').innerText()).toMatch(new RegExp(`^Archive ${tag} › `));
      expect(await cited.innerText()).toContain(secret);
      expect(await panel.getByTestId('neighbour').count()).toBeGreaterThan(0);
      expect(await panel.locator('[data-testid="neighbour"][data-position="before"]').first().innerText()).toContain(`archive ${tag}`);
      expect(await overflowing(c.page)).toEqual([]);
      await screenshot(c.page, 'source');
      // Escape closes it and gives focus back to the citation.
      await c.page.keyboard.press('Escape');
      await panel.waitFor({ state: 'detached' });
      expect(await citation.evaluate((el) => el === document.activeElement)).toBe(true);

      // Unshared: the same citation now says its source is gone (the chunk route answers 404 under the access rule).
      await setAccess(app.t, alice, collectionId, [{ principal: `user:${aliceId}`, role: 'owner' }]);
      await citation.click();
      await panel.getByText('This source is no longer available').waitFor();
      expect(await panel.locator('mark').count()).toBe(0);
      await panel.getByRole('button', { name: 'Close' }).click();
      await panel.waitFor({ state: 'detached' });
      expect(carolErrors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    } finally {
      await c.context.close();
    }

    // Bob reads neither the collection nor its fact.
    const b = await signedInPage(app.browser, app.base, tokenOf(bob), VIEWPORTS.desktop);
    try {
      await openKnowledge(b.page);
      await collectionRow(b.page, DEFAULT_COLLECTION_ID).waitFor();
      expect(await collectionRow(b.page, collectionId).count()).toBe(0);
      expect(await b.page.getByText(name).count()).toBe(0);
      await b.page.getByRole('button', { name: 'Chat', exact: true }).click();
      await b.page.getByRole('button', { name: /^Searching:/ }).click();
      await b.page.getByRole('checkbox', { name: /^default/ }).waitFor();
      expect(await b.page.getByRole('checkbox', { name: new RegExp(name) }).count()).toBe(0);
      expect(await (await ask(b.page, QUESTION)).innerText()).not.toContain(secret);
    } finally {
      await b.context.close();
    }

    // Alice deletes the collection, after a confirmation.
    const again = await signedInPage(app.browser, app.base, tokenOf(alice), VIEWPORTS.desktop);
    try {
      await openKnowledge(again.page);
      await collectionRow(again.page, collectionId).getByRole('button', { name }).click();
      await again.page.getByRole('button', { name: 'Delete collection' }).click();
      const confirm = again.page.getByRole('dialog', { name: 'Delete collection' });
      expect(await confirm.innerText()).toContain(name);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await again.page.getByRole('button', { name: 'Delete collection' }).click();
      // The list's reload after the delete is held: the screen must not show the deleted collection from the list it had.
      let releaseList: () => void = () => undefined;
      const listHeld = new Promise<void>((resolve) => (releaseList = resolve));
      const listRoute = /\/api\/knowledge\/collections(\?.*)?$/;
      await again.page.route(listRoute, async (route) => {
        if (route.request().method() === 'GET') await listHeld;
        await route.fallback();
      });
      await confirm.getByRole('button', { name: 'Delete collection' }).click();
      await again.page.getByRole('heading', { name: 'Knowledge', exact: true }).waitFor();
      await collectionRow(again.page, DEFAULT_COLLECTION_ID).waitFor();
      expect(await collectionRow(again.page, collectionId).count()).toBe(0);
      releaseList();
      await again.page.unroute(listRoute);
      await api().get(`/api/knowledge/collections/${collectionId}`).set(alice).expect(404);
    } finally {
      await again.context.close();
    }
  });

  it.each([
    ['1440 px', VIEWPORTS.desktop],
    ['375 px', VIEWPORTS.phone],
  ] as const)('at %s the collection picker restricts a new chat from its first turn, is saved on the session and survives a reload', async (_width, viewport) => {
    const tag = randomUUID().slice(0, 8);
    const secret = `juniper${tag}quartz`;
    const filename = `archive-${tag}.md`;
    const userId = uniqueUser('web-picker');
    const user = app.t.auth(userId);
    const name = `Vault rules ${tag}`;
    const collectionId = (await createCollection(app.t, user, name)).id;
    await uploadTo(app.t, user, collectionId, filename, vaultDocument(secret, tag));

    const { context, page } = await signedInPage(app.browser, app.base, tokenOf(user), viewport);
    const errors = pageErrors(page);
    try {
      // A new chat, with no session yet: only the default collection.
      await page.getByRole('heading', { name: 'Ask the knowledge base' }).waitFor();
      await page.getByRole('button', { name: /^Searching: all collections you can read/ }).click();
      await page.getByRole('checkbox', { name: new RegExp(name) }).waitFor();
      await page.getByRole('checkbox', { name: /^default/ }).check();
      expect(await page.getByRole('checkbox', { name: 'All collections you can read' }).isChecked()).toBe(false);
      await page.getByTestId('collection-status').filter({ hasText: 'Applies from the first question of this chat.' }).waitFor();
      const turnBodies: Array<Record<string, unknown>> = [];
      page.on('request', (sent) => {
        if (sent.method() === 'POST' && new URL(sent.url()).pathname === '/api/chat/stream') turnBodies.push(sent.postDataJSON());
      });
      const restricted = await ask(page, QUESTION);
      expect(await restricted.innerText()).not.toContain(secret);
      // The first turn named the choice itself: there was no session to save it on before it.
      expect(turnBodies).toEqual([{ message: QUESTION, collection_ids: [DEFAULT_COLLECTION_ID] }]);
      // The turn's session saved the choice once it existed.
      await page.getByTestId('collection-status').filter({ hasText: 'Saved for this chat.' }).waitFor();
      const sessionId = /#session=([0-9a-f-]{36})/.exec(page.url())![1];
      expect((await storedSession(user, sessionId)).collection_ids).toEqual([DEFAULT_COLLECTION_ID]);
      const firstTrace = (await api().get(`/api/sessions/${sessionId}/messages`).set(user).expect(200)).body.messages.at(-1).rag_trace;
      expect(JSON.stringify(firstTrace)).not.toContain(collectionId);

      // After a reload the session comes back with its choice, and its next turn still searches default only.
      await page.reload();
      await page.locator('article[data-role="ai"][data-status="complete"]').first().waitFor();
      await page
        .getByTestId('collection-summary')
        .filter({ hasText: /^default$/ })
        .waitFor();
      await page.getByRole('button', { name: /^Searching:/ }).click();
      expect(await page.getByRole('checkbox', { name: /^default/ }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: new RegExp(name) }).isChecked()).toBe(false);
      expect(await (await ask(page, QUESTION)).innerText()).not.toContain(secret);
      if (viewport === VIEWPORTS.phone) expect(await overflowing(page)).toEqual([]);

      // Only the vault's collection: the fact is found, and the choice is saved.
      await page.getByRole('checkbox', { name: new RegExp(name) }).check();
      await page.getByRole('checkbox', { name: /^default/ }).uncheck();
      await page.getByTestId('collection-status').filter({ hasText: 'Saved for this chat.' }).waitFor();
      expect((await storedSession(user, sessionId)).collection_ids).toEqual([collectionId]);
      const found = await ask(page, QUESTION);
      expect(await found.innerText()).toContain(secret);

      // The citation opens its source beside the answer; the Close button closes it.
      await found.locator('button.citation', { hasText: filename }).first().click();
      const panel = page.getByRole('dialog', { name: 'Source' });
      await panel.locator('mark[data-cited="true"]').waitFor();
      expect(await panel.getByTestId('neighbour').count()).toBeGreaterThan(0);
      if (viewport === VIEWPORTS.desktop) await screenshot(page, 'source');
      await panel.getByRole('button', { name: 'Close' }).click();
      await panel.waitFor({ state: 'detached' });

      // Back to All: cleared on the session (null: every collection the user can read).
      await page.getByRole('checkbox', { name: 'All collections you can read' }).check();
      await page.getByTestId('collection-status').filter({ hasText: 'Saved for this chat.' }).waitFor();
      expect((await storedSession(user, sessionId)).collection_ids).toBeNull();
      expect(await page.getByTestId('collection-summary').innerText()).toBe('all collections you can read');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a question sent while the save of "All collections" is on its way waits for that save, and searches every collection', async () => {
    const tag = randomUUID().slice(0, 8);
    const secret = `juniper${tag}quartz`;
    const userId = uniqueUser('web-picker-race');
    const user = app.t.auth(userId);
    const collectionId = (await createCollection(app.t, user, `Vault rules ${tag}`)).id;
    await uploadTo(app.t, user, collectionId, `archive-${tag}.md`, vaultDocument(secret, tag));
    // A session whose saved choice is the default collection alone: its turns do not find the vault's fact.
    const first = await api()
      .post('/api/chat')
      .set(user)
      .send({ message: 'Hello', collection_ids: [DEFAULT_COLLECTION_ID] })
      .expect(200);
    const sessionId = first.body.session_id as string;
    await api()
      .patch(`/api/sessions/${sessionId}`)
      .set(user)
      .send({ collection_ids: [DEFAULT_COLLECTION_ID] })
      .expect(200);

    const { context, page } = await signedInPage(app.browser, app.base, tokenOf(user), VIEWPORTS.desktop);
    const errors = pageErrors(page);
    try {
      await page.goto(`${app.base}/#session=${sessionId}`);
      // While the list of collections loads, the saved choice is counted, not called unavailable.
      // Every request for it is held (the page before the reload may still ask); one the reload cancelled cannot go on.
      const heldLists: Array<() => void> = [];
      const releaseList = () => heldLists.splice(0).forEach((release) => release());
      await page.route('**/api/knowledge/collections?*', async (route) => {
        await new Promise<void>((release) => heldLists.push(release));
        await route.continue().catch(() => undefined);
      });
      await page.reload();
      await page.locator('article[data-role="ai"][data-status="complete"]').first().waitFor();
      // The session's saved choice arrives by a request of its own: until it does, the summary says All.
      const summary = page.getByTestId('collection-summary');
      await summary.filter({ hasNotText: 'all collections you can read' }).waitFor();
      expect(await summary.innerText()).toBe('1 collection');
      releaseList();
      await page.unroute('**/api/knowledge/collections?*');
      await summary.filter({ hasText: /^default$/ }).waitFor();
      // The save of "All" is held at the network until the question is known to wait for it.
      let releaseSave!: () => void;
      const saveHeld = new Promise<void>((held) =>
        page.route(`**/api/sessions/${sessionId}`, async (route) => {
          if (route.request().method() !== 'PATCH') return route.continue();
          held();
          await new Promise<void>((release) => (releaseSave = release));
          await route.continue();
        }),
      );
      let streamSent!: () => void;
      const streamed = new Promise<'sent before the save'>((sent) => (streamSent = () => sent('sent before the save')));
      page.on('request', (sent) => {
        if (sent.method() === 'POST' && new URL(sent.url()).pathname === '/api/chat/stream') streamSent();
      });
      await page.getByRole('button', { name: /^Searching:/ }).click();
      await page.getByRole('checkbox', { name: 'All collections you can read' }).check();
      await saveHeld;
      const box = page.getByLabel('Message', { exact: true });
      await box.fill(QUESTION);
      await box.press('Enter');
      const waiting = page
        .getByTestId('collection-status')
        .filter({ hasText: 'the question goes once the choice is saved' })
        .waitFor()
        .then(() => 'waiting for the save' as const);
      expect(await Promise.race([waiting, streamed])).toBe('waiting for the save');
      releaseSave();
      const answer = page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]').nth(1);
      expect(await answer.innerText()).toContain(secret);
      expect((await storedSession(user, sessionId)).collection_ids).toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("the administrators' screen still lists and uploads to the default collection, labelled as such", async () => {
    const admin = adminAuth(app.t, 'web-kb-admin');
    const tag = randomUUID().slice(0, 8);
    const filename = `default-notes-${tag}.md`;
    const { context, page } = await signedInPage(app.browser, app.base, tokenOf(admin), VIEWPORTS.desktop);
    const errors = pageErrors(page);
    try {
      await page.getByRole('button', { name: 'Knowledge base (admin)' }).click();
      await page.getByRole('heading', { name: 'Knowledge base: the default collection' }).waitFor();
      await page.locator('tr[data-testid="document"]').first().waitFor();
      await page.getByRole('heading', { name: 'Upload a document to the default collection' }).waitFor();
      await page.getByLabel('Document file').setInputFiles({ name: filename, mimeType: 'text/markdown', buffer: Buffer.from(`# Notes ${tag}\n\nThe notes of ${tag}.`) });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Added ${filename}` })
        .waitFor();
      const row = page.locator(`tr[data-testid="document"][data-filename="${filename}"]`);
      await row.waitFor();
      const inDefault = (await api().get('/api/knowledge/collections/default/documents').set(admin).expect(200)).body.documents;
      expect(inDefault.find((d: { filename: string }) => d.filename === filename)).toMatchObject({ collection_id: DEFAULT_COLLECTION_ID });

      // In the Knowledge screen the administrator owns default, which keeps its name and its `everyone` entry.
      await openKnowledge(page);
      expect(await collectionRow(page, DEFAULT_COLLECTION_ID).locator('[data-testid="role"]').innerText()).toBe('owner');
      await collectionRow(page, DEFAULT_COLLECTION_ID).getByRole('button', { name: 'default' }).click();
      await page.getByRole('heading', { name: 'default', exact: true }).waitFor();
      expect(await page.getByLabel('Collection name').isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Delete collection' }).count()).toBe(0);
      const sharing = page.getByRole('region', { name: 'Sharing' });
      await sharing.getByRole('button', { name: 'Remove everyone signed in' }).click();
      await sharing.getByRole('alert').filter({ hasText: 'The default collection cannot be renamed or deleted, and must stay readable by everyone.' }).waitFor();

      // Back on the administrators' screen, its delete still works.
      await page.getByRole('button', { name: 'Knowledge base (admin)' }).click();
      await row.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog', { name: 'Delete document' }).getByRole('button', { name: 'Delete' }).click();
      await row.waitFor({ state: 'detached' });
      const after = (await api().get('/api/knowledge/documents').set(admin).expect(200)).body.documents;
      expect(after.map((d: { filename: string }) => d.filename)).not.toContain(filename);
      expect(errors.filter((e) => !/status of 409/.test(e))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
