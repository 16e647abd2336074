import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { takeMissingCodeProblems } from './support/error-body-check.js';

/**
 * The e2e setup file fails a test that receives an error body without a
 * `code`: shown here on a server that answers one, through supertest and
 * through fetch.
 */
describe('the e2e check of error bodies', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const coded = req.url === '/coded';
      res.writeHead(req.url === '/ok' ? 200 : 404, { 'content-type': 'application/json', 'x-request-id': 'r1' });
      res.end(JSON.stringify(coded ? { statusCode: 404, message: 'gone', code: 'not_found' } : { statusCode: 404, message: 'no code here' }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fails a supertest request whose error body has no code, and passes one that has it', async () => {
    await expect(request(base).get('/plain').expect(404)).rejects.toThrow('404 from /plain: the error body has no code');
    await request(base).get('/coded').expect(404);
    await request(base).get('/ok').expect(200);
  });

  it('reports a fetch response whose error body has no code', async () => {
    expect((await fetch(`${base}/plain`)).status).toBe(404);
    expect((await fetch(`${base}/coded`)).status).toBe(404);
    expect(await takeMissingCodeProblems()).toEqual([expect.stringContaining('404 from /plain: the error body has no code')]);
  });
});
