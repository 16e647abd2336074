import request from 'supertest';
import { appInChromium, describeWithChromium, pageErrors } from './support/browser.js';
import { createTestApp, TestApp } from './support/test-app.js';

/** The headers the API documentation must carry, as the web client's page does: no framing, no sniffing, no referrer. */
function expectDocumentHeaders(headers: Record<string, string>): void {
  const policy = headers['content-security-policy'];
  expect(policy).toMatch(/default-src 'self'/);
  expect(policy).toMatch(/script-src 'self'(;|$)/);
  expect(policy).toMatch(/frame-ancestors 'none'/);
  expect(policy).toMatch(/object-src 'none'/);
  expect(policy).toMatch(/base-uri 'none'/);
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe('/docs security headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ KNOWLEDGE_SEED_ON_START: 'false' });
  });
  afterAll(() => t.close());

  it('sends a Content-Security-Policy, no framing, nosniff and no referrer on the Swagger UI, its assets and the OpenAPI documents', async () => {
    for (const path of ['/docs', '/DOCS', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs-json', '/docs-yaml']) {
      const res = await request(t.app.getHttpServer()).get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect({ path, policy: res.headers['content-security-policy'] !== undefined }).toEqual({ path, policy: true });
      expectDocumentHeaders(res.headers as Record<string, string>);
    }
  });
});

describeWithChromium('/docs in Chromium under its Content-Security-Policy', () => {
  const suite = appInChromium({ KNOWLEDGE_SEED_ON_START: 'false' });

  it('renders the operations with no script or style blocked', async () => {
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      const errors = pageErrors(page);
      const response = await page.goto(`${suite.base}/docs`);
      expectDocumentHeaders(response!.headers());
      await page.locator('.opblock').first().waitFor();
      expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
      expect(await page.locator('.swagger-ui .info .title').textContent()).toMatch(/Agentic-RAG chat backend/);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
