import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../config/app-config.js';
import { checkModelEndpoint } from './model-endpoint-check.js';

/** An endpoint whose GET /v1/models answers `status` with `body`; the Authorization header it got is kept. */
async function endpoint(status: number, body: unknown) {
  const seen: { authorization?: string; path?: string } = {};
  const server = http.createServer((req, res) => {
    seen.authorization = req.headers.authorization;
    seen.path = req.url;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

const config = (port: number, extra: Record<string, string> = {}) =>
  loadConfig({ LLM_PROVIDER: 'openai', LLM_BASE_URL: `http://127.0.0.1:${port}/v1/`, LLM_API_KEY: 'sk-test', LLM_MODEL: 'qwen2.5-7b', ...extra });

describe('checkModelEndpoint (the start-up look at LLM_BASE_URL)', () => {
  it('says nothing when the endpoint lists the models, and sends the key', async () => {
    const server = await endpoint(200, { data: [{ id: 'qwen2.5-7b' }, { id: 'qwen2.5-1.5b' }] });
    try {
      expect(await checkModelEndpoint(config(server.port, { LLM_FAST_MODEL: 'qwen2.5-1.5b' }))).toEqual([]);
      expect(server.seen).toEqual({ authorization: 'Bearer sk-test', path: '/v1/models' });
    } finally {
      await server.close();
    }
  });

  it('names a model the endpoint does not list', async () => {
    const server = await endpoint(200, { data: [{ id: 'llama3.1-8b' }] });
    try {
      expect(await checkModelEndpoint(config(server.port, { LLM_FAST_MODEL: 'llama3.1-8b' }))).toEqual([
        `LLM_MODEL: the model endpoint at 127.0.0.1:${server.port} does not list the model "qwen2.5-7b" (it lists llama3.1-8b)`,
      ]);
    } finally {
      await server.close();
    }
  });

  it('names a refused key and a failing server; an endpoint without /models is fine', async () => {
    for (const [status, expected] of [
      [401, (port: number) => [`LLM_API_KEY: the model endpoint at 127.0.0.1:${port} answered HTTP 401 to GET /models: the key was refused`]],
      [503, (port: number) => [`LLM_BASE_URL: the model endpoint at 127.0.0.1:${port} answered HTTP 503 to GET /models`]],
      [404, () => []],
    ] as const) {
      const server = await endpoint(status, { error: { message: 'no' } });
      try {
        expect(await checkModelEndpoint(config(server.port))).toEqual(expected(server.port));
      } finally {
        await server.close();
      }
    }
  });

  it('looks at nothing with the local model', async () => {
    expect(await checkModelEndpoint(loadConfig({}))).toEqual([]);
  });
});
