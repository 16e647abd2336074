import { existsSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { WEB_CLIENT_DIR } from '../src/web-client.module.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** The web client's build is made by `npm run build` (the README's test command runs it first). */
const built = existsSync(path.join(WEB_CLIENT_DIR, 'index.html'));
const describeBuilt = built || process.env.CI ? describe : describe.skip;

describeBuilt('the web client served at /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves the page at / and at any client route, with a strict Content-Security-Policy', async () => {
    for (const route of ['/', '/sessions/some-id']) {
      const page = await request(t.app.getHttpServer()).get(route).expect(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.text).toContain('<div id="root"></div>');
      expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
      expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    }
    const script = page(await request(t.app.getHttpServer()).get('/').expect(200));
    const asset = await request(t.app.getHttpServer()).get(script).expect(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toMatch(/immutable/);
  });

  it('leaves the API, /docs and /health as they were: an unknown API route is still a JSON 404', async () => {
    const missing = await request(t.app.getHttpServer())
      .get('/api/nothing-here')
      .set(t.auth(uniqueUser('web')))
      .expect(404);
    expect(missing.body).toMatchObject({ statusCode: 404 });
    const v1 = await request(t.app.getHttpServer())
      .get('/v1/nothing')
      .set(t.auth(uniqueUser('web')))
      .expect(404);
    expect(v1.body.error).toBeDefined();
    await request(t.app.getHttpServer()).get('/health').expect(200);
    await request(t.app.getHttpServer()).get('/docs-json').expect(200);
    // MCP: its metadata is JSON; an OAuth well-known document this service does not serve is a JSON 404, not the page.
    await request(t.app.getHttpServer()).get('/.well-known/oauth-protected-resource/mcp').expect(200).expect('Content-Type', /json/);
    await request(t.app.getHttpServer()).get('/.well-known/oauth-authorization-server').expect(404).expect('Content-Type', /json/);
    await request(t.app.getHttpServer()).get('/mcp/anything').expect(404).expect('Content-Type', /json/);
    // The metrics scrape and the LangGraph API's unknown paths are not the page either.
    await request(t.app.getHttpServer())
      .get('/metrics')
      .expect(200)
      .expect('Content-Type', /^text\/plain/);
    await request(t.app.getHttpServer()).get('/metrics/anything').expect(404).expect('Content-Type', /json/);
    await request(t.app.getHttpServer())
      .get('/langgraph/nothing')
      .set(t.auth(uniqueUser('web')))
      .expect(404)
      .expect('Content-Type', /json/);
  });

  it('has no development sign-in route outside development', async () => {
    await request(t.app.getHttpServer()).post('/api/dev/token').send({ sub: 'alice' }).expect(404);
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    expect(Object.keys(doc.paths)).not.toContain('/api/dev/token');
  });
});

function page(response: { text: string }): string {
  const match = /<script[^>]+src="([^"]+)"/.exec(response.text);
  if (!match) throw new Error('the page names no script');
  return match[1];
}

describe('the web client switched off', () => {
  it('answers / with 404 when WEB_CLIENT_ENABLED=false', async () => {
    const t = await createTestApp({ WEB_CLIENT_ENABLED: 'false' });
    try {
      await request(t.app.getHttpServer()).get('/').expect(404);
    } finally {
      await t.close();
    }
  });
});

describe('development sign-in (NODE_ENV=development, no JWT_SECRET)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ NODE_ENV: 'development', JWT_SECRET: '' });
  });
  afterAll(() => t.close());

  it('mints a working token for any user id, admin when asked', async () => {
    const user = uniqueUser('dev');
    const minted = await request(t.app.getHttpServer()).post('/api/dev/token').send({ sub: user, role: 'admin' }).expect(200);
    const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set('Authorization', `Bearer ${minted.body.token}`).expect(200);
    expect(sessions.body.sessions).toEqual([]);
    // The admin role: past the admin check (404 for a document that does not exist, not 403).
    await request(t.app.getHttpServer()).delete('/api/knowledge/documents/00000000-0000-4000-8000-000000000000').set('Authorization', `Bearer ${minted.body.token}`).expect(404);
  });

  it('does not exist when a JWT_SECRET is set, even in development (a deployment that forgot NODE_ENV=production)', async () => {
    const withSecret = await createTestApp({ NODE_ENV: 'development' });
    try {
      await request(withSecret.app.getHttpServer()).post('/api/dev/token').send({ sub: 'alice' }).expect(404);
    } finally {
      await withSecret.close();
    }
  });

  it('refuses a user id that is not one', async () => {
    await request(t.app.getHttpServer()).post('/api/dev/token').send({ sub: '\u0000' }).expect(400);
    await request(t.app.getHttpServer()).post('/api/dev/token').send({ sub: 'x', role: 'root' }).expect(400);
  });
});
