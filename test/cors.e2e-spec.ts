import request from 'supertest';
import { loadConfig } from '../src/config/app-config.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const ALLOWED = 'http://app.example.test:5173';
const OTHER = 'http://evil.example.test';

const headerList = (value: string | undefined) => (value ?? '').split(',').map((item) => item.trim().toLowerCase());

describe('CORS', () => {
  describe('with CORS_ORIGINS set', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ CORS_ORIGINS: `${ALLOWED}, http://second.example.test` });
    });
    afterAll(() => t.close());

    it('answers a preflight from a listed origin with 204 and the headers a web client needs', async () => {
      const res = await request(t.app.getHttpServer())
        .options('/api/chat/stream')
        .set('Origin', ALLOWED)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type')
        .expect(204);
      expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(headerList(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['authorization', 'content-type', 'last-event-id']));
      expect(headerList(res.headers['access-control-allow-methods'])).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'put', 'delete']));
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['x-request-id']).toBeDefined();

      const rejoin = await request(t.app.getHttpServer())
        .options('/api/chat/runs/00000000-0000-4000-8000-000000000000/stream')
        .set('Origin', 'http://second.example.test')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'last-event-id')
        .expect(204);
      expect(rejoin.headers['access-control-allow-origin']).toBe('http://second.example.test');
    });

    it('exposes x-request-id and Retry-After to the page on real responses, errors included', async () => {
      const ok = await request(t.app.getHttpServer())
        .get('/api/sessions')
        .set(t.auth(uniqueUser('cors')))
        .set('Origin', ALLOWED)
        .expect(200);
      expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(headerList(ok.headers['access-control-expose-headers'])).toEqual(expect.arrayContaining(['x-request-id', 'retry-after']));
      const denied = await request(t.app.getHttpServer()).get('/api/sessions').set('Origin', ALLOWED).expect(401);
      expect(denied.headers['access-control-allow-origin']).toBe(ALLOWED);
    });

    it('gives an origin that is not listed no Access-Control-Allow-Origin', async () => {
      const preflight = await request(t.app.getHttpServer())
        .options('/api/chat/stream')
        .set('Origin', OTHER)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      const get = await request(t.app.getHttpServer())
        .get('/api/sessions')
        .set(t.auth(uniqueUser('cors')))
        .set('Origin', OTHER)
        .expect(200);
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('without CORS_ORIGINS', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('sends no CORS header at all', async () => {
      const preflight = await request(t.app.getHttpServer()).options('/api/chat/stream').set('Origin', ALLOWED).set('Access-Control-Request-Method', 'POST');
      expect(preflight.status).not.toBe(204);
      expect(Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    });
  });

  describe('configuration', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'a-real-production-secret' };

    it('refuses * in production at start-up, and accepts it elsewhere', () => {
      expect(() => loadConfig({ ...production, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS: must list the allowed origins when NODE_ENV=production/);
      expect(() => loadConfig({ ...production, CORS_ORIGINS: `${ALLOWED},*` })).toThrow(/CORS_ORIGINS/);
      expect(loadConfig({ ...production, CORS_ORIGINS: ALLOWED }).http.corsOrigins).toEqual([ALLOWED]);
      expect(loadConfig({ NODE_ENV: 'development', CORS_ORIGINS: '*' }).http.corsOrigins).toEqual(['*']);
    });

    it('parses a comma list, treats empty as off, and refuses what is not an origin', () => {
      expect(loadConfig({ CORS_ORIGINS: ` ${ALLOWED} , https://b.example.test ` }).http.corsOrigins).toEqual([ALLOWED, 'https://b.example.test']);
      // Written as browsers send them, whatever the case or default port in the setting.
      expect(loadConfig({ CORS_ORIGINS: 'https://App.Example.test:443,http://b.example.test:80,http://c.example.test:8080' }).http.corsOrigins).toEqual([
        'https://app.example.test',
        'http://b.example.test',
        'http://c.example.test:8080',
      ]);
      expect(loadConfig({ CORS_ORIGINS: '' }).http.corsOrigins).toEqual([]);
      expect(loadConfig({}).http.corsOrigins).toEqual([]);
      for (const bad of ['app.example.test', 'http://app.example.test/', 'http://app.example.test/path', 'ftp://x.test']) {
        expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS: must be a comma-separated list of origins/);
      }
    });

    it('bounds STREAM_TICKET_TTL_SECONDS', () => {
      expect(loadConfig({}).streamTickets.ttlSeconds).toBe(60);
      expect(loadConfig({ STREAM_TICKET_TTL_SECONDS: '30' }).streamTickets.ttlSeconds).toBe(30);
      expect(() => loadConfig({ STREAM_TICKET_TTL_SECONDS: '0' })).toThrow(/STREAM_TICKET_TTL_SECONDS/);
    });
  });
});
