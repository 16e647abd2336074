import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible /embeddings endpoint for tests: a unit vector per
 * input (from the text's characters). It fails the next `failures` requests
 * with 500, and while `held` keeps its replies until `release()` (or
 * `failHeld()`, which answers them with 500).
 */
export class FakeEmbeddingsServer {
  failures = 0;
  held = false;
  requests = 0;
  url = '';
  private server?: http.Server;
  private readonly heldReplies = new Set<{ reply: () => void; fail: () => void }>();
  private readonly onRequest = new Set<() => void>();

  constructor(readonly dimensions = 16) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.requests += 1;
        for (const listener of [...this.onRequest]) listener();
        const fail = () => res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'embeddings down' } }));
        if (this.failures > 0) {
          this.failures -= 1;
          fail();
          return;
        }
        const reply = () => {
          const input = JSON.parse(body).input as string[];
          const data = input.map((text, index) => {
            const vector = Array.from({ length: this.dimensions }, (_, i) => (text.charCodeAt(i % text.length) % 7) + 1);
            const norm = Math.hypot(...vector);
            return { object: 'embedding', index, embedding: vector.map((v) => v / norm) };
          });
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'fake', usage: {} }));
        };
        if (this.held) this.heldReplies.add({ reply, fail });
        else reply();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** The service's settings that embed through this server, without retries (a test decides when it fails). */
  env(): Record<string, string> {
    return {
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: this.url,
      EMBEDDING_API_KEY: 'test',
      EMBEDDING_DIMENSIONS: String(this.dimensions),
      LLM_MAX_RETRIES: '0',
    };
  }

  /** Resolves at the next request. */
  nextRequest(): Promise<void> {
    return new Promise((resolve) => {
      const listener = () => {
        this.onRequest.delete(listener);
        resolve();
      };
      this.onRequest.add(listener);
    });
  }

  /** Stops holding, and answers the held requests. */
  release(): void {
    this.held = false;
    for (const { reply } of this.heldReplies) reply();
    this.heldReplies.clear();
  }

  /** Answers the held requests with 500 (the endpoint failing); later ones are still held while `held`. */
  failHeld(): void {
    for (const { fail } of this.heldReplies) fail();
    this.heldReplies.clear();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
