import http from 'node:http';
import net from 'node:net';
import { loadConfig } from '../config/app-config.js';
import { ModelCallError, modelEndpointFailure } from './model-errors.js';
import { OpenAIChatProvider } from './openai-chat-provider.js';

/** A port nothing listens on (a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The service's chat model (LLM_PROVIDER=openai) at `baseUrl`. */
function modelAt(baseUrl: string, maxRetries: number) {
  return OpenAIChatProvider.fromConfig(loadConfig({ LLM_PROVIDER: 'openai', LLM_BASE_URL: baseUrl, LLM_MAX_RETRIES: String(maxRetries) }), 'main');
}

describe('Model failures in our words', () => {
  const realFetch = globalThis.fetch;
  /** HTTP requests the model's client made in the test (every attempt is one). */
  let requests = 0;
  beforeEach(() => {
    requests = 0;
    // The OpenAI client takes the global fetch when it makes its first request.
    globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
      requests += 1;
      return realFetch(...args);
    }) as typeof fetch;
  });
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it('a refused connection: said so, and not tried again (LLM_MAX_RETRIES does not apply: nothing listens there)', async () => {
    const port = await closedPort();
    const error = await modelAt(`http://127.0.0.1:${port}/v1`, 3)
      .invoke('hello')
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(modelEndpointFailure(error)).toBe('refused the connection');
    expect(new ModelCallError(error).message).toBe('The model failed (its endpoint refused the connection).');
    expect(requests).toBe(1);
  });

  it('an HTTP error: its status, and retried as LangChain decides (a 500, LLM_MAX_RETRIES times)', async () => {
    const server = http.createServer((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"down"}}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const error = await modelAt(`http://127.0.0.1:${port}/v1`, 1)
        .invoke('hello')
        .then(
          () => undefined,
          (failure: unknown) => failure,
        );
      expect(new ModelCallError(error).message).toBe('The model failed (its endpoint answered HTTP 500).');
      expect(requests).toBe(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('names timeouts, unknown hosts, closed connections and TLS, from anywhere in the cause chain', () => {
    const wrapped = (code: string) =>
      Object.assign(new Error('Connection error.'), { cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('x'), { code }) }) });
    expect(modelEndpointFailure(wrapped('ETIMEDOUT'))).toBe('timed out');
    expect(modelEndpointFailure(wrapped('ENOTFOUND'))).toBe('could not be found (host name lookup failed)');
    expect(modelEndpointFailure(wrapped('ECONNRESET'))).toBe('closed the connection');
    expect(modelEndpointFailure(wrapped('DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe('failed the TLS handshake');
    expect(modelEndpointFailure(Object.assign(new Error('Request timed out.'), { name: 'TimeoutError' }))).toBe('timed out');
    expect(new ModelCallError(new Error('something else')).message).toBe('The model failed.');
  });
});
