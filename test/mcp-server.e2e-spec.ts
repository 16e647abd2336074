import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';
import { createCollection, uploadTo } from './support/collections.js';
import { generateSigningKey, JwksServer, signToken } from './support/jwks-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** Searches per user and minute in this file: small, so a test can spend a budget; each test's users are its own. */
const SEARCH_BUDGET = 4;
const FACT = 'The Zephyr-9 lighthouse beacon blinks every 42 seconds from dusk to dawn.';
const QUESTION = 'How often does the Zephyr-9 lighthouse beacon blink?';

type Headers = Record<string, string>;

interface SearchResult {
  chunk_id: string;
  document: string;
  collection_id: string;
  source: string;
  page: number | null;
  score: number | null;
  text: string;
}

/** Issue 26 part 2: the knowledge base as an MCP server at /mcp, driven by the MCP SDK's own client over Streamable HTTP. */
describe('The knowledge base as an MCP server (/mcp)', () => {
  let t: TestApp;
  let base: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_SEARCH_PER_MINUTE: String(SEARCH_BUDGET) });
    base = await t.listen();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await t?.close();
  });

  /** A connected client (tools listed, so the client checks each result against its tool's output schema). */
  const connect = async (headers: Headers): Promise<Client> => {
    const client = new Client({ name: 'mcp-server-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
    clients.push(client);
    await client.listTools();
    return client;
  };
  const search = async (client: Client, args: Record<string, unknown>): Promise<SearchResult[]> => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: args });
    expect(result.isError).toBeFalsy();
    return (result.structuredContent as { results: SearchResult[] }).results;
  };
  /** The JSON-RPC error a call is refused with (the test fails if it succeeds or fails otherwise). */
  const refusal = async (call: Promise<unknown>): Promise<McpError> => {
    const error = await call.then(
      (value) => new Error(`expected a JSON-RPC error, got ${JSON.stringify(value).slice(0, 300)}`),
      (reason: unknown) => reason,
    );
    if (!(error instanceof McpError)) throw error;
    return error;
  };
  /** A user with a private collection holding FACT. */
  const alice = async () => {
    const userId = uniqueUser('alice');
    const auth = t.auth(userId);
    const collection = await createCollection(t, auth, 'Lighthouses');
    await uploadTo(t, auth, collection.id, 'zephyr-beacon.md', `# Zephyr-9 Beacon Manual\n\n${FACT}\n\nThe lamp is serviced every spring.\n`);
    return { userId, auth, collectionId: collection.id };
  };
  const post = (headers: Headers, body: unknown) =>
    request(t.app.getHttpServer())
      .post('/mcp')
      .set({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', ...headers })
      .send(body as object);

  it('lists its three tools with their input and output schemas', async () => {
    const client = await connect(t.auth(uniqueUser()));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['get_chunk', 'list_collections', 'search_knowledge']);
    const searchTool = tools.find((tool) => tool.name === 'search_knowledge')!;
    expect(searchTool.inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      additionalProperties: false,
      properties: { query: { type: 'string', maxLength: 2000 }, top_k: { type: 'integer', minimum: 1, maximum: 50 } },
    });
    expect(searchTool.outputSchema?.properties).toHaveProperty('results');
    expect(searchTool.annotations).toMatchObject({ readOnlyHint: true });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
  });

  it('finds a fact of an uploaded document, with its document, source, collection and score', async () => {
    const owner = await alice();
    const client = await connect(owner.auth);
    for (const args of [{ query: QUESTION }, { query: QUESTION, collection_ids: [owner.collectionId], top_k: 3 }]) {
      const results = await search(client, args);
      const hit = results.find((result) => result.text.includes('every 42 seconds'));
      expect(hit).toMatchObject({
        document: 'Zephyr-9 Beacon Manual',
        source: 'zephyr-beacon.md',
        collection_id: owner.collectionId,
        page: null,
        chunk_id: expect.stringMatching(/^\d+$/),
      });
      expect(typeof hit!.score).toBe('number');
    }
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: QUESTION, collection_ids: [owner.collectionId] } });
    expect((result.content as Array<{ type: string; text: string }>)[0]).toMatchObject({ type: 'text', text: expect.stringContaining('every 42 seconds') });
    // The seeded corpus of `default`, which everyone reads.
    const corpus = await search(client, { query: 'How long is the Aurora X2 warranty?' });
    expect(corpus).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ collection_id: DEFAULT_COLLECTION_ID, source: 'aurora-x2-mesh-manual.md', text: expect.stringContaining('three-year limited warranty') }),
      ]),
    );
  });

  it('lists the collections the caller may read, and reads a chunk in context', async () => {
    const owner = await alice();
    const client = await connect(owner.auth);
    const listed = await client.callTool({ name: 'list_collections', arguments: {} });
    const { collections, next_cursor } = listed.structuredContent as {
      collections: Array<{ id: string; name: string; role: string; document_count: number }>;
      next_cursor: string | null;
    };
    expect(collections).toEqual(expect.arrayContaining([expect.objectContaining({ id: owner.collectionId, name: 'Lighthouses', role: 'owner', document_count: 1 })]));
    expect(next_cursor).toBeNull();
    const [hit] = (await search(client, { query: QUESTION, collection_ids: [owner.collectionId], top_k: 1 })).filter((r) => r.text.includes('42 seconds'));
    const chunk = await client.callTool({ name: 'get_chunk', arguments: { chunk_id: hit.chunk_id } });
    expect(chunk.structuredContent).toMatchObject({
      chunk_id: hit.chunk_id,
      collection_id: owner.collectionId,
      document: { filename: 'zephyr-beacon.md' },
      text: expect.stringContaining('every 42 seconds'),
      before: expect.any(Array),
      after: expect.any(Array),
    });
  });

  it("never shows another user's private collection: not by search, by collection_ids, by listing or by get_chunk", async () => {
    const owner = await alice();
    const ownerClient = await connect(owner.auth);
    const [hit] = (await search(ownerClient, { query: QUESTION, collection_ids: [owner.collectionId] })).filter((r) => r.text.includes('42 seconds'));
    const bob = await connect(t.auth(uniqueUser('bob')));

    const found = await search(bob, { query: QUESTION, top_k: 50 });
    expect(found.filter((result) => result.collection_id === owner.collectionId || result.text.includes('42 seconds'))).toEqual([]);

    const listed = (await bob.callTool({ name: 'list_collections', arguments: {} })).structuredContent as { collections: Array<{ id: string }> };
    expect(listed.collections.map((c) => c.id)).not.toContain(owner.collectionId);

    // Another user's collection is refused exactly as one that does not exist.
    const forgedCollection = '7b0d3c1e-2f4a-4b8c-9d6e-0a1b2c3d4e5f';
    for (const id of [owner.collectionId, forgedCollection]) {
      const error = await refusal(bob.callTool({ name: 'search_knowledge', arguments: { query: QUESTION, collection_ids: [id] } }));
      expect([error.code, (error.data as { code: string }).code]).toEqual([ErrorCode.InvalidParams, 'collection_not_found']);
      expect(error.message).toBe(`MCP error -32602: Collection "${id}" not found`);
    }
    // Another user's chunk is refused exactly as a forged one.
    for (const id of [hit.chunk_id, '999999999999', 'not-a-chunk']) {
      const error = await refusal(bob.callTool({ name: 'get_chunk', arguments: { chunk_id: id } }));
      expect([error.code, (error.data as { code: string }).code, error.message]).toEqual([ErrorCode.InvalidParams, 'chunk_not_found', `MCP error -32602: Chunk "${id}" not found`]);
    }
  });

  it('answers hostile arguments with JSON-RPC errors, never a 500', async () => {
    const client = await connect(t.auth(uniqueUser('mallory')));
    const hostile: Array<[string, Record<string, unknown>]> = [
      ['search_knowledge', { query: 'beacon\u0000blink' }],
      ['search_knowledge', { query: 'beacon \ud800 blink' }],
      ['search_knowledge', { query: 'x'.repeat(900_000) }],
      ['search_knowledge', { query: '\u200b \u200b' }],
      ['search_knowledge', { query: '' }],
      ['search_knowledge', {}],
      ['search_knowledge', { query: 42 }],
      ['search_knowledge', { query: QUESTION, top_k: '5' }],
      ['search_knowledge', { query: QUESTION, top_k: 0 }],
      ['search_knowledge', { query: QUESTION, top_k: 2.5 }],
      ['search_knowledge', { query: QUESTION, collection_ids: 'default' }],
      ['search_knowledge', { query: QUESTION, collection_ids: [] }],
      ['search_knowledge', { query: QUESTION, collection_ids: [{ id: 'default' }] }],
      ['search_knowledge', { query: QUESTION, collection_ids: ['x'.repeat(100_000)] }],
      ['search_knowledge', { query: QUESTION, [`k${'\u0000'.repeat(3)}${'y'.repeat(50_000)}`]: 1 }],
      ['list_collections', { cursor: 'bm90LWEtY3Vyc29y' }],
      ['list_collections', { cursor: 'a\u0000b' }],
      ['list_collections', { limit: 'all' }],
      ['get_chunk', { chunk_id: 12 }],
      ['get_chunk', { chunk_id: '1\u0000' }],
      ['get_chunk', { chunk_id: '\udc00' }],
      ['get_chunk', { chunk_id: '9'.repeat(41) }],
      ['get_chunk', {}],
      ['drop_tables', {}],
      ['\u0000'.repeat(10), {}],
    ];
    for (const [name, args] of hostile) {
      const error = await refusal(client.callTool({ name, arguments: args }));
      expect([name.slice(0, 20), error.code, (error.data as { code?: string }).code]).toEqual([
        name.slice(0, 20),
        ErrorCode.InvalidParams,
        expect.stringMatching(/^invalid_(request|cursor)$/),
      ]);
      expect(error.message.length).toBeLessThan(700);
    }
    // Envelope errors of tools/call, and methods this server does not serve.
    expect((await refusal(client.request({ method: 'tools/call', params: { name: 7, arguments: {} } } as never, CallToolResultSchema))).code).toBe(ErrorCode.InvalidParams);
    expect((await refusal(client.request({ method: 'tools/call', params: { name: 'get_chunk', arguments: 'x' } } as never, CallToolResultSchema))).code).toBe(
      ErrorCode.InvalidParams,
    );
    expect((await refusal(client.listResources())).code).toBe(ErrorCode.MethodNotFound);

    // Refused before the transport: a body over BODY_LIMIT, malformed JSON, a batch of junk, GET and DELETE.
    const auth = t.auth(uniqueUser('mallory'));
    const tooLarge = await post(auth, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_knowledge', arguments: { query: 'x'.repeat(2_000_000) } } });
    expect([tooLarge.status, tooLarge.body.jsonrpc, tooLarge.body.error.data.code]).toEqual([413, '2.0', 'payload_too_large']);
    const malformed = await request(t.app.getHttpServer())
      .post('/mcp')
      .set({ ...auth, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' })
      .send('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect([malformed.status, malformed.body.error.code, malformed.body.id]).toEqual([400, ErrorCode.ParseError, null]);
    // An initialize the SDK's own schema refuses: a JSON-RPC error in a 200, not a 500.
    const badInitialize = await post(auth, { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: 7, clientInfo: 'x\u0000' } });
    expect([badInitialize.status, badInitialize.body.id, typeof badInitialize.body.error?.code]).toEqual([200, 3, 'number']);
    const junk = await post(auth, [1, 'two', null]);
    expect(junk.status).toBe(400);
    expect(junk.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    for (const method of ['get', 'delete'] as const) {
      const res = await request(t.app.getHttpServer())[method]('/mcp').set(auth);
      expect([res.status, res.headers.allow, res.body]).toEqual([
        405,
        'POST',
        { jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/not allowed/), data: { code: 'not_supported', request_id: expect.any(String) } }, id: null },
      ]);
    }
  });

  it('answers PUT, PATCH and OPTIONS as GET and DELETE: 405 with Allow: POST, a JSON-RPC error saying so', async () => {
    const auth = t.auth(uniqueUser('mallory'));
    for (const method of ['put', 'patch', 'options'] as const) {
      const res = await request(t.app.getHttpServer())
        [method]('/mcp')
        .set(auth)
        .set('Content-Type', 'application/json')
        .send('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}');
      expect({ method, status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
        method,
        status: 405,
        allow: 'POST',
        body: { jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/not allowed/), data: { code: 'not_supported', request_id: expect.any(String) } }, id: null },
      });
    }
  });

  it('answers a batch that cancels its own request, and odd envelopes of tools/call, with JSON-RPC answers', async () => {
    const auth = t.auth(uniqueUser('mallory'));
    // A cancellation of a request of the same POST: the request is answered (a stateless POST cannot leave it unanswered).
    const cancelled = await post(auth, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_collections', arguments: {} } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } },
    ]).timeout(20_000);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { structuredContent: { collections: expect.any(Array) } } });
    const duplicateIds = await post(auth, [
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_collections', arguments: {} } },
    ]).timeout(20_000);
    expect([duplicateIds.status, duplicateIds.body.error?.data?.code, duplicateIds.body.error?.message]).toEqual([400, 'invalid_request', expect.stringMatching(/twice/)]);
    // A request (it has an id) named notifications/cancelled is not a notification: it is answered, not dropped.
    const cancelAsRequest = await post(auth, [{ jsonrpc: '2.0', id: 9, method: 'notifications/cancelled', params: { requestId: 9 } }]);
    expect([cancelAsRequest.status, cancelAsRequest.body.id]).toEqual([200, 9]);
    const onlyCancel = await post(auth, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    expect(onlyCancel.status).toBe(202);
    // `arguments: null`: said in a sentence, not a schema library's dump.
    const nullArguments = await post(auth, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_knowledge', arguments: null } });
    expect([nullArguments.status, nullArguments.body.error?.code]).toEqual([200, ErrorCode.InvalidParams]);
    expect(nullArguments.body.error.message).toMatch(/arguments must be an object/);
    expect(nullArguments.body.error.message.length).toBeLessThan(300);
    // A call as a task, which this server does not run (it declares no tasks capability): refused in a sentence, not an internal error.
    const task = await post(auth, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_collections', arguments: {}, task: { ttl: 1000 } } });
    expect([task.status, task.body.id, task.body.error]).toEqual([
      200,
      3,
      { code: ErrorCode.MethodNotFound, message: expect.stringMatching(/runs no tasks/), data: { code: 'not_supported' } },
    ]);
    // An initialize whose params do not fit: InvalidParams naming the field, not an internal error.
    for (const params of [
      { protocolVersion: 7, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      { protocolVersion: '2025-11-25', capabilities: {} },
    ]) {
      const initialize = await post(auth, { jsonrpc: '2.0', id: 4, method: 'initialize', params });
      expect({ params, status: initialize.status, code: initialize.body.error?.code, data: initialize.body.error?.data }).toEqual({
        params,
        status: 200,
        code: ErrorCode.InvalidParams,
        data: { code: 'invalid_request', request_id: expect.any(String) },
      });
      expect(initialize.body.error.message).toMatch(/^Invalid initialize: .*(protocolVersion|clientInfo|params)/);
      expect(initialize.body.error.message.length).toBeLessThan(300);
    }
  });

  it('refuses a caller without a valid token with 401, a WWW-Authenticate challenge and the protected-resource metadata', async () => {
    const error = await new Client({ name: 'anonymous', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`))).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);

    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
    const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
    const anonymous = await post({}, initialize);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    expect(anonymous.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'unauthorized' } } });
    const forged: Headers[] = [{ Authorization: 'Bearer not-a-token' }, { Authorization: 'Bearer rk-forged' }, { 'X-Api-Key': 'rk-forged' }];
    for (const headers of forged) {
      const res = await post(headers, initialize);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(new RegExp(`^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="${metadataUrl}"$`));
    }

    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = await request(t.app.getHttpServer()).get(path).expect(200);
      // No identity provider configured: no OAuth flow issues this service's tokens, so no authorization server is named.
      expect(metadata.body).toEqual({ resource: `${base}/mcp`, bearer_methods_supported: ['header'], resource_name: expect.any(String) });
    }
  });

  it('accepts an API key, as a Bearer token and as X-Api-Key', async () => {
    const owner = await alice();
    const created = await request(t.app.getHttpServer()).post('/api/keys').set(owner.auth).send({ name: 'ide' }).expect(201);
    const keyHeaders: Headers[] = [{ Authorization: `Bearer ${created.body.key}` }, { 'X-Api-Key': created.body.key as string }];
    for (const headers of keyHeaders) {
      const client = await connect(headers);
      const listed = (await client.callTool({ name: 'list_collections', arguments: {} })).structuredContent as { collections: Array<{ id: string }> };
      expect(listed.collections.map((c) => c.id)).toContain(owner.collectionId);
    }
    await request(t.app.getHttpServer()).delete(`/api/keys/${created.body.id}`).set(owner.auth).expect(200);
    const revoked = await post({ Authorization: `Bearer ${created.body.key}` }, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(revoked.status).toBe(401);
  });

  it('counts searches against the search budget: a call past it is a JSON-RPC error with Retry-After, invalid calls are free', async () => {
    const auth = t.auth(uniqueUser('carol'));
    const client = await connect(auth);
    for (let i = 0; i < 3; i += 1) await refusal(client.callTool({ name: 'search_knowledge', arguments: { query: '' } }));
    for (let i = 0; i < SEARCH_BUDGET; i += 1) await search(client, { query: `beacon ${i}` });
    // Listing and reading chunks are not searches.
    await client.callTool({ name: 'list_collections', arguments: {} });
    const error = await refusal(client.callTool({ name: 'search_knowledge', arguments: { query: 'beacon' } }));
    expect([error.code, error.data]).toEqual([-32000, { code: 'rate_limited', request_id: expect.any(String), retry_after_seconds: expect.any(Number) }]);
    expect(error.message).toMatch(/Too many searches for this user; retry in \d+ s/);
    const raw = await post(
      { ...auth, 'Mcp-Protocol-Version': '2025-11-25' },
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'search_knowledge', arguments: { query: 'beacon' } },
      },
    );
    expect([raw.status, raw.body.id, raw.body.error.data.code]).toEqual([200, 7, 'rate_limited']);
    expect(Number(raw.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('allows the MCP headers from browsers on CORS_ORIGINS', async () => {
    const cors = await createTestApp({ CORS_ORIGINS: 'https://app.example' });
    try {
      const res = await request(cors.app.getHttpServer())
        .options('/mcp')
        .set({ Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,mcp-protocol-version' })
        .expect(204);
      expect(res.headers['access-control-allow-headers'].toLowerCase()).toEqual(expect.stringContaining('mcp-protocol-version'));
      const refused = await request(cors.app.getHttpServer()).post('/mcp').set('Origin', 'https://app.example').send({}).expect(401);
      expect(refused.headers['access-control-expose-headers'].toLowerCase()).toEqual(expect.stringContaining('www-authenticate'));
    } finally {
      await cors.close();
    }
  });
});

describe('The MCP protected-resource metadata with an identity provider', () => {
  const ISSUER = 'https://idp.example/realms/rag';
  let t: TestApp;
  let jwks: JwksServer;
  let key: Awaited<ReturnType<typeof generateSigningKey>>;

  beforeAll(async () => {
    key = await generateSigningKey('mcp-key');
    jwks = await JwksServer.start([key]);
    t = await createTestApp({ JWT_JWKS_URL: jwks.url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: 'rag-api', PUBLIC_BASE_URL: 'https://rag.example/' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await jwks?.stop();
  });

  it("names the identity provider's issuer, the public URL, and takes its tokens", async () => {
    const metadata = await request(t.app.getHttpServer()).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    expect(metadata.body).toMatchObject({ resource: 'https://rag.example/mcp', authorization_servers: [ISSUER], bearer_methods_supported: ['header'] });
    const anonymous = await request(t.app.getHttpServer()).post('/mcp').send({}).expect(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer resource_metadata="https://rag.example/.well-known/oauth-protected-resource/mcp"');

    const base = await t.listen();
    const token = await signToken(key, { sub: uniqueUser('idp'), iss: ISSUER, aud: 'rag-api' });
    const client = new Client({ name: 'idp-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const listed = (await client.callTool({ name: 'list_collections', arguments: {} })).structuredContent as { collections: Array<{ id: string }> };
      expect(listed.collections.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
