import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { LocalRerank } from '../src/knowledge/retrieval/rerank.js';
import { adminAuth } from './support/admin.js';
import { describeWithChromium, launchChromium, pageErrors, screenshot, signedInPage, VIEWPORTS } from './support/browser.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * A Jina/Cohere-style rerank API scoring exactly as the offline reranker does,
 * so answers are the ones of the default setup. `hold()` keeps the next calls
 * waiting until `release()` — a turn then stays inside its rerank stage, with
 * its first steps streamed, for as long as the test looks at them; `failNext`
 * answers the next call with a 503 (the trace records a rerank error).
 */
class HeldReranker {
  private server?: http.Server;
  private readonly local = new LocalRerank(1000);
  private gate?: Promise<void>;
  private openGate?: () => void;
  private readonly arrivals: Array<() => void> = [];
  failNext = false;
  url = '';

  hold(): void {
    this.gate ??= new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = this.openGate = undefined;
  }

  nextRequest(): Promise<void> {
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        for (const arrived of this.arrivals.splice(0)) arrived();
        void (this.gate ?? Promise.resolve()).then(async () => {
          if (this.failNext) {
            this.failNext = false;
            res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"error":"overloaded"}');
            return;
          }
          const { query, documents } = JSON.parse(body) as { query: string; documents: string[] };
          const scores = await this.local.score(query, documents);
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ results: scores.map((relevance_score, index) => ({ index, relevance_score })) }));
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/rerank`;
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const tokenOf = (auth: { Authorization: string }) => auth.Authorization.slice('Bearer '.length);

/** Sends a chat message through the composer and waits for the turn's answer to be complete. */
async function ask(page: Page, question: string): Promise<void> {
  const before = await page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]').count();
  await page.getByLabel('Message').fill(question);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]').nth(before).waitFor();
}

const lastAnswer = (page: Page) => page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]').last();

/** A duration as the web client shows it (fmtMs): whole milliseconds under a second, seconds above (a loaded machine is slow). */
const DURATION = String.raw`(?:\d+ ms|\d+(?:\.\d)? s)`;

describeWithChromium('web client: live timeline, trace viewer and knowledge admin (Chromium)', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const reranker = new HeldReranker();

  beforeAll(async () => {
    await reranker.start();
    // The rerank timeout only stops a genuine hang: the tests release a held call themselves.
    t = await createTestApp({ RERANK_PROVIDER: 'http', RERANK_URL: reranker.url, RERANK_MODEL: 'fake-reranker', RERANK_TIMEOUT_MS: '60000' });
    base = await t.listen();
    browser = await launchChromium();
  }, 60000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await reranker.stop();
  });

  it('shows the steps and tool call of a running knowledge turn, then its trace: waterfall, chunk bars, grading, rerank; a citation focuses its chunk', async () => {
    const auth = t.auth(uniqueUser('trace'));
    const { context, page } = await signedInPage(browser, base, tokenOf(auth), VIEWPORTS.desktop);
    const errors = pageErrors(page);
    try {
      reranker.hold();
      const reranking = reranker.nextRequest();
      await page.getByLabel('Message').fill('How long is the Aurora X2 warranty?');
      await page.getByRole('button', { name: 'Send' }).click();
      await reranking;
      // Held in rerank: the recall steps are on screen and the knowledge tool is running.
      const timeline = page.locator('section[aria-label="Retrieval steps"]');
      await timeline.locator('[data-testid="step"][data-stage="recall"]').waitFor();
      await timeline.locator('[data-testid="tool-call"][data-status="running"]').waitFor();
      const recallStep = timeline.locator('[data-testid="step"][data-stage="recall"]');
      expect(await recallStep.innerText()).toMatch(new RegExp(String.raw`recall[\s\S]*Hybrid recall[\s\S]*k = \d+[\s\S]*\+${DURATION} · ${DURATION}`, 'i'));
      expect(await recallStep.getByRole('img').getAttribute('aria-label')).toMatch(new RegExp(`^${DURATION} after the previous step, ${DURATION} into the turn$`));
      expect(await timeline.locator('[data-testid="tool-call"]').first().innerText()).toMatch(/^knowledge\S* running… \(.*Aurora X2 warranty/);
      reranker.release();

      const answer = lastAnswer(page);
      await answer.waitFor();
      await expect(page.locator('section[aria-label="Retrieval steps"]').count()).resolves.toBe(0);
      // The trace the service stored with the answer, to compare the viewer with.
      const [session] = (await request(t.app.getHttpServer()).get('/api/sessions').set(auth).expect(200)).body.sessions;
      const stored = (await request(t.app.getHttpServer()).get(`/api/sessions/${session.session_id}/messages`).set(auth).expect(200)).body.messages;
      const trace = stored.at(-1).rag_trace;
      expect(trace.rerank_model).toBe('fake-reranker');

      const opener = answer.getByRole('button', { name: 'Show trace' });
      await opener.click();
      const dialog = page.getByRole('dialog', { name: 'Trace' });
      await dialog.waitFor();
      // Focus moved into the dialog (its Close button).
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Close');

      // Waterfall: one bar per timed stage, in pipeline order, labelled with its milliseconds.
      const waterfall = dialog.getByRole('list', { name: 'Stage timings' }).first();
      const bars = await waterfall.getByRole('img').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
      expect(bars[0]).toMatch(new RegExp(`^recall: ${DURATION}, from 0 ms to ${DURATION}$`));
      expect(bars.some((b) => b?.startsWith('rerank: '))).toBe(true);
      expect(bars.findIndex((b) => b?.startsWith('rerank: '))).toBeGreaterThan(0);
      expect(await waterfall.innerText()).toMatch(new RegExp(String.raw`total\s+${DURATION}`));

      // The final evidence, with source, page and the three bars of each chunk.
      const finalList = dialog.getByRole('list', { name: 'Final evidence' });
      const first = finalList.locator('[data-testid="trace-chunk"]').first();
      expect(await first.getAttribute('data-source')).toBe(trace.final_chunks[0].source);
      expect(trace.final_chunks[0].source).toBe('aurora-x2-mesh-manual.md');
      await first.getByRole('img', { name: /^RRF rank \d+$/ }).waitFor();
      await first.getByRole('img', { name: /^Recall score [\d.]+$/ }).waitFor();
      const rerankLabel = await first.getByRole('img', { name: /^Rerank score / }).getAttribute('aria-label');
      expect(Number(rerankLabel!.split(' ').at(-1))).toBeCloseTo(trace.final_chunks[0].rerank_score, 2);
      const fill = await first.locator('.bar-rerank .bar-fill').evaluate((el) => (el as HTMLElement).style.width);
      expect(fill).toMatch(/%$/);
      expect(await dialog.getByRole('list', { name: 'Initial recall' }).locator('[data-testid="trace-chunk"]').count()).toBe(trace.initial_chunks.length);

      // Grading and the rerank settings as the trace has them.
      const grading = dialog.getByRole('definition').filter({ hasText: /^answer$/ });
      await grading.first().waitFor();
      const text = await dialog.innerText();
      expect(text).toContain(`Confidence`);
      expect(text).toContain(trace.grade_reason);
      expect(text).toMatch(/Model\s+fake-reranker/);
      expect(text).toContain(reranker.url);
      await dialog.getByRole('img', { name: `Confidence ${trace.grade_confidence.toFixed(2)} of 1` }).waitFor();
      await screenshot(page, 'trace');

      // Tab stays inside the dialog, both ways.
      await page.keyboard.press('Shift+Tab');
      expect(await dialog.evaluate((el) => el.contains(document.activeElement) && document.activeElement?.textContent !== 'Close')).toBe(true);
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Close');

      // Escape closes it and gives focus back to the button that opened it.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Show trace');

      // A citation opens its source; from there the viewer opens on its chunk, highlighted and scrolled into view.
      await answer.locator('button.citation').first().click();
      await page.getByRole('dialog', { name: 'Source' }).getByRole('button', { name: 'Show in trace' }).click();
      const focused = dialog.locator('[data-focused="true"]');
      await focused.waitFor();
      expect(await focused.getAttribute('data-source')).toBe('aurora-x2-mesh-manual.md');
      expect(await focused.evaluate((el) => el === document.activeElement)).toBe(true);
      const box = (await focused.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height / 2).toBeLessThanOrEqual(VIEWPORTS.desktop.height);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(errors).toEqual([]);
    } finally {
      reranker.release();
      await context.close();
    }
  });

  it('shows sub-questions side by side, the rewrite, and a rerank error; usable at 375 px', async () => {
    for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      const { context, page } = await signedInPage(browser, base, tokenOf(t.auth(uniqueUser('trace-more'))), viewport);
      const errors = pageErrors(page);
      try {
        await ask(page, 'What is the hotel limit in Tokyo and how long is the Aurora X2 warranty?');
        await lastAnswer(page).getByRole('button', { name: 'Show trace' }).click();
        const dialog = page.getByRole('dialog', { name: 'Trace' });
        const subs = dialog.locator('article[aria-label^="Sub-question"]');
        await subs.first().waitFor();
        expect(await subs.count()).toBe(2);
        expect(await subs.nth(0).innerText()).toMatch(/hotel limit in Tokyo/i);
        expect(await subs.nth(1).innerText()).toMatch(/Aurora X2 warranty/i);
        expect(await subs.nth(0).locator('[data-testid="trace-chunk"]').first().getAttribute('data-source')).toBe('travel-expense-policy.md');
        // The sub-questions' retrievals ran in parallel: both bars of the waterfall start at 0.
        const timings = dialog.getByRole('list', { name: 'Stage timings' }).first();
        await timings.getByRole('img', { name: new RegExp(`^sub-question 1: ${DURATION}, from 0 ms to ${DURATION}$`) }).waitFor();
        await timings.getByRole('img', { name: new RegExp(`^sub-question 2: ${DURATION}, from 0 ms to ${DURATION}$`) }).waitFor();
        const [a, b] = [(await subs.nth(0).boundingBox())!, (await subs.nth(1).boundingBox())!];
        if (viewport === VIEWPORTS.desktop) {
          expect(Math.abs(a.y - b.y)).toBeLessThan(2); // side by side
          expect(b.x).toBeGreaterThan(a.x + a.width - 1);
        } else {
          expect(b.y).toBeGreaterThanOrEqual(a.y + a.height - 1); // stacked on a phone
          expect(a.x + a.width).toBeLessThanOrEqual(viewport.width);
        }
        // Nothing in the dialog is wider than the screen.
        expect(await dialog.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
        if (viewport === VIEWPORTS.phone) await screenshot(page, 'trace');
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });

        if (viewport === VIEWPORTS.desktop) {
          await ask(page, 'Tell me about the lounge access rules for travellers');
          await lastAnswer(page).getByRole('button', { name: 'Show trace' }).click();
          const rewrite = dialog.getByRole('region', { name: 'Rewrite', exact: true });
          await rewrite.waitFor();
          expect(await rewrite.innerText()).toMatch(/Mode\s+(step-back question|hypothetical passage \(HyDE\))/);
          expect(await rewrite.innerText()).toMatch(/Rewritten query\s+\S/);
          await dialog.getByRole('button', { name: 'Close' }).click();

          // A paused turn resumed by an option: the HITL stage's chunks and the resume in the trace.
          await page.getByLabel('Message').fill('How long is the Aurora warranty?');
          await page.getByRole('button', { name: 'Send' }).click();
          const options = page.getByRole('group', { name: 'Choose an option' });
          await options.waitFor();
          const complete = page.locator('article[data-testid="message"][data-role="ai"][data-status="complete"]');
          const before = await complete.count();
          await options.getByRole('button', { name: 'Aurora X2 Mesh System — User Manual' }).click();
          await complete.nth(before).waitFor();
          await options.waitFor({ state: 'detached' });
          await lastAnswer(page).getByRole('button', { name: 'Show trace' }).click();
          const hitl = dialog.getByRole('region', { name: 'Human in the loop', exact: true });
          await hitl.waitFor();
          expect(await hitl.innerText()).toMatch(/Resumed\s+yes[\s\S]*User’s answer\s+Aurora X2 Mesh System — User Manual/);
          const hitlChunks = dialog.getByRole('list', { name: 'After the user’s answer (HITL)' }).locator('[data-testid="trace-chunk"]');
          expect(await hitlChunks.first().getAttribute('data-source')).toBe('aurora-x2-mesh-manual.md');
          expect(await hitl.innerText()).toMatch(/Before the pause\s+(\w+ \/ )?clarify \/ needs_choice/);
          await dialog.getByRole('button', { name: 'Close' }).click();

          reranker.failNext = true;
          await ask(page, 'How do I reset the Aurora X1 router?');
          await lastAnswer(page).getByRole('button', { name: 'Show trace' }).click();
          const problems = dialog.getByRole('list', { name: 'Retrieval errors' });
          await problems.waitFor();
          expect(await problems.innerText()).toMatch(/Rerank error: .*503/);
          expect(await dialog.innerText()).toMatch(/Rerank\s+on[\s\S]*Applied\s+no/);
          await dialog.getByRole('button', { name: 'Close' }).click();
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('lets an admin upload a document with progress, see its counts, test a search, ask about it and delete it', async () => {
    const admin = adminAuth(t, 'kb-admin');
    const stamp = `${Date.now()}${process.pid}`;
    const filename = `zephyr-q7-blender-${stamp}.md`;
    const paragraphs = [
      `# Zephyr Q7 blender (${stamp})`,
      'The Zephyr Q7 blender warranty lasts 41 months from the date of purchase.',
      ...Array.from({ length: 30 }, (_, i) => `Section ${i + 1}. The Zephyr Q7 jar holds 1.8 litres; clean the blades of the Zephyr Q7 with warm water after use ${i + 1}.`),
    ];
    const content = paragraphs.join('\n\n');
    const { context, page } = await signedInPage(browser, base, tokenOf(admin), VIEWPORTS.desktop);
    const errors = pageErrors(page);
    try {
      await page.getByRole('button', { name: 'Knowledge base' }).click();
      await page.locator('table', { has: page.locator('caption', { hasText: /^Documents$/ }) }).waitFor();
      await page.getByLabel('Document file').setInputFiles({ name: filename, mimeType: 'text/markdown', buffer: Buffer.from(content) });
      await page.getByRole('button', { name: 'Upload' }).click();

      // The upload bar reaches its end (from the browser's upload events), then the document is listed with its counts.
      const progress = page.getByLabel('Upload progress');
      await progress.waitFor();
      await page
        .getByRole('status')
        .filter({ hasText: `Added ${filename}` })
        .waitFor();
      const [value, max] = await progress.evaluate((el) => [(el as HTMLProgressElement).value, (el as HTMLProgressElement).max]);
      expect(max).toBeGreaterThanOrEqual(content.length);
      expect(value).toBe(max);
      // Then the ingest job's bar (the upload answered 202 with a job, which the page followed to its end).
      const processing = page.getByLabel('Processing progress');
      expect(await processing.evaluate((el) => [(el as HTMLProgressElement).value, (el as HTMLProgressElement).max])).toEqual([100, 100]);
      const row = page.locator(`tr[data-testid="document"][data-filename="${filename}"]`);
      await row.waitFor();
      const listed = (await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(admin).expect(200)).body.documents.find(
        (d: { filename: string }) => d.filename === filename,
      );
      expect(listed.chunk_count).toBeGreaterThan(1);
      expect(await row.locator('td[data-label="Chunks"]').innerText()).toBe(String(listed.chunk_count));
      expect(await row.locator('td[data-label="Leaves"]').innerText()).toBe(String(listed.leaf_count));
      expect(await row.locator('td[data-label="Pages"]').innerText()).toBe('–'); // text has no pages

      // The search tester: each candidate with its ranks and scores, the new document first.
      await page.getByLabel('Test query').fill('Zephyr Q7 blender warranty');
      await page.getByRole('button', { name: 'Search' }).click();
      const candidates = page.locator('tr[data-testid="candidate"]');
      await candidates.first().waitFor();
      expect(await candidates.first().locator('th').innerText()).toContain(filename);
      // Where in the document: the heading path the chunk starts under (a text without pages).
      expect(await candidates.first().locator('td[data-label="Where"]').innerText()).toBe(`Zephyr Q7 blender (${stamp})`);
      const ranks = await candidates.locator('[data-testid="rrf-rank"]').allInnerTexts();
      expect(ranks.every((r) => /^\d+$/.test(r))).toBe(true);
      await candidates
        .first()
        .locator('[data-testid="rerank-score"]')
        .getByRole('img', { name: /^Rerank score [\d.]+$/ })
        .waitFor();
      // The first candidate was found by both legs (its name and its words match the query).
      expect(await candidates.first().locator('[data-testid="full-text-rank"]').innerText()).toMatch(/^\d+$/);
      expect(await candidates.first().locator('[data-testid="dense-rank"]').innerText()).toMatch(/^\d+$/);
      await screenshot(page, 'knowledge');

      // A question answered from it, with its citation, through the chat.
      await page.getByRole('button', { name: 'Chat', exact: true }).click();
      await ask(page, 'How long is the Zephyr Q7 blender warranty?');
      const answer = lastAnswer(page);
      expect(await answer.innerText()).toContain('41 months');
      const citation = answer.locator('button.citation', { hasText: filename });
      await citation.first().click();
      const source = page.getByRole('dialog', { name: 'Source' });
      expect(await source.getByTestId('source-document').innerText()).toBe(filename);
      await source.getByRole('button', { name: 'Show in trace' }).click();
      const focused = page.getByRole('dialog', { name: 'Trace' }).locator('[data-focused="true"]');
      await focused.waitFor();
      expect(await focused.getAttribute('data-source')).toBe(filename);
      await page.keyboard.press('Escape');

      // Delete asks first; Cancel keeps it, Delete removes it.
      await page.getByRole('button', { name: 'Knowledge base' }).click();
      await row.getByRole('button', { name: 'Delete' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete document' });
      expect(await confirm.innerText()).toContain(filename);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      expect(await row.count()).toBe(1);
      await row.getByRole('button', { name: 'Delete' }).click();
      await confirm.getByRole('button', { name: 'Delete' }).click();
      await row.waitFor({ state: 'detached' });
      const after = (await request(t.app.getHttpServer()).get('/api/knowledge/documents').set(admin).expect(200)).body.documents;
      expect(after.map((d: { filename: string }) => d.filename)).not.toContain(filename);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }

    // The admin screen at phone width, with a search result.
    const phone = await signedInPage(browser, base, tokenOf(admin), VIEWPORTS.phone);
    try {
      await phone.page.getByRole('button', { name: 'Knowledge base' }).click();
      await phone.page.locator('tr[data-testid="document"]').first().waitFor();
      await phone.page.getByLabel('Test query').fill('Aurora X1 factory reset');
      await phone.page.getByRole('button', { name: 'Search' }).click();
      await phone.page.locator('tr[data-testid="candidate"]').first().waitFor();
      await phone.page.locator('tr[data-testid="candidate"]').first().scrollIntoViewIfNeeded();
      await screenshot(phone.page, 'knowledge');
      const wide = await phone.page.evaluate(() =>
        [...document.querySelectorAll('.admin, .admin *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1).map((el) => `${el.tagName}.${el.className}`),
      );
      expect(wide).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });

  it('shows no Knowledge base button to a user who is not an admin', async () => {
    const { context, page } = await signedInPage(browser, base, tokenOf(t.auth(uniqueUser('kb-user'))), VIEWPORTS.desktop);
    try {
      await page.getByRole('button', { name: 'Chat', exact: true }).waitFor();
      expect(await page.getByRole('button', { name: 'Knowledge base' }).count()).toBe(0);
      expect(await page.getByLabel('Document file').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
