import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CryptoKey, exportJWK, generateKeyPair, JWK, JWTPayload, SignJWT } from 'jose';

export type JwksAlgorithm = 'RS256' | 'ES256';

export interface SigningKey {
  kid: string;
  alg: JwksAlgorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * How the server answers `GET /jwks.json`: `ok` the published keys,
 * `garbage` a 200 that is not JSON, `not-jwks` JSON that is not a key set, `error` a 500, `hang` never (the
 * request stays open until the server is stopped).
 */
export type JwksMode = 'ok' | 'garbage' | 'not-jwks' | 'error' | 'hang';

/** Generates a signing key pair; the public half is what a JWKS publishes. */
export async function generateSigningKey(kid: string, alg: JwksAlgorithm = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

/** Signs a JWT with `key` (its kid in the header); `header` overrides header fields. */
export async function signToken(key: SigningKey, claims: JWTPayload, options: { expiresIn?: string | number | null; header?: Record<string, unknown> } = {}): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header }).setIssuedAt();
  if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '10m');
  return jwt.sign(key.privateKey);
}

/**
 * A local identity provider's key endpoint: publishes the public halves of
 * its keys at `/jwks.json`, counts the fetches, and can rotate keys, answer
 * badly or go away (`stop`).
 */
export class JwksServer {
  private readonly keys = new Map<string, SigningKey>();
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  /** `GET /jwks.json` requests received (answered or hanging). */
  fetches = 0;
  mode: JwksMode = 'ok';

  private constructor() {}

  static async start(keys: SigningKey[] = []): Promise<JwksServer> {
    const jwks = new JwksServer();
    for (const key of keys) jwks.addKey(key);
    const server = createServer((request, response) => jwks.handle(request, response));
    server.on('connection', (socket) => {
      jwks.sockets.add(socket);
      socket.on('close', () => jwks.sockets.delete(socket));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    jwks.server = server;
    return jwks;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('JWKS server is not listening');
    return `http://127.0.0.1:${address.port}/jwks.json`;
  }

  addKey(key: SigningKey): void {
    this.keys.set(key.kid, key);
  }

  removeKey(kid: string): void {
    this.keys.delete(kid);
  }

  /** Closes the listener and every open connection: the URL then refuses connections. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    const closed = once(server, 'close');
    server.close();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'GET' || request.url !== '/jwks.json') {
      response.writeHead(404).end();
      return;
    }
    this.fetches += 1;
    switch (this.mode) {
      case 'hang':
        return;
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": "not a key set"');
        return;
      case 'not-jwks':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": "none"}');
        return;
      case 'error':
        response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return;
      case 'ok': {
        const body = JSON.stringify({ keys: [...this.keys.values()].map((key) => key.publicJwk) });
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
      }
    }
  }
}
