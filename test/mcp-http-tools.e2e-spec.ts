import { createServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { readSse } from './support/sse-client.js';

const TOKEN = 'Bearer remote-mcp-secret';

/** A real MCP server over Streamable HTTP (the SDK's transport, stateless), with one tool, `add`, behind a bearer token. */
function startRemoteMcpServer(): Promise<{ http: HttpServer; url: string; calls: number[] }> {
  const calls: number[] = [];
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== TOKEN) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = new Server({ name: 'remote', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: 'add', description: 'Adds two numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const { a, b } = call.params.arguments as { a: number; b: number };
      calls.push(a + b);
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  return new Promise((resolve) => http.listen(0, '127.0.0.1', () => resolve({ http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls })));
}

describe('MCP servers as agent tools (over Streamable HTTP)', () => {
  const llm = new FakeOpenAIServer();
  let remote: Awaited<ReturnType<typeof startRemoteMcpServer>>;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await llm.start();
    remote = await startRemoteMcpServer();
    const mcpServers = [
      { name: 'remote', transport: 'http', url: remote.url, headers: { Authorization: TOKEN }, timeout_ms: 5000 },
      { name: 'nokey', transport: 'http', url: remote.url, timeout_ms: 5000 },
    ];
    t = await createTestApp(llm.appEnv({ LLM_TIMEOUT_MS: '5000', MCP_SERVERS: JSON.stringify(mcpServers) }));
    base = await t.listen();
  });
  afterAll(async () => {
    await t?.close();
    remote?.http.closeAllConnections();
    await new Promise((resolve) => remote?.http.close(resolve));
    await llm.stop();
  });
  beforeEach(() => llm.reset());

  const admin = () => t.auth(uniqueUser('admin'), { role: 'admin' });
  const listServers = async () => (await request(t.app.getHttpServer()).get('/api/mcp/servers').set(admin()).expect(200)).body as Array<Record<string, any>>;
  const streamTurn = (message: string) =>
    readSse(`${base}/api/chat/stream`, { method: 'POST', headers: { ...t.auth(uniqueUser()), 'Content-Type': 'application/json' }, body: JSON.stringify({ message }) });
  const toolEvents = (events: Array<{ event: string; data: any }>) => events.filter((e) => e.event === 'tool').map((e) => [e.data.name, e.data.phase, e.data.summary]);

  it('lists the server with its headers as up with its tool; without the token it is down, and says why', async () => {
    const byName = Object.fromEntries((await listServers()).map((s) => [s.name, s]));
    expect(byName.remote).toMatchObject({ transport: 'http', status: 'up', attempts: 0, last_error: null, tools: [{ name: 'add', description: 'Adds two numbers' }] });
    expect(byName.nokey).toMatchObject({ transport: 'http', status: expect.stringMatching(/^(down|restarting)$/), tools: [] });
    expect(byName.nokey.last_error).toMatch(/unauthorized/);
  });

  it("calls the remote tool through the agent, the server's answer in the tool event and the model's next request", async () => {
    llm.play({ toolCalls: [{ name: 'mcp__remote__add', args: { a: 2, b: 3 } }] }, { content: 'It is 5.' });
    const stream = await streamTurn('Add 2 and 3');
    expect(stream.events.at(-1)?.event).toBe('done');
    expect(toolEvents(stream.events)).toEqual([
      ['mcp__remote__add', 'start', { args: { a: 2, b: 3 } }],
      ['mcp__remote__add', 'end', { output: '5', truncated: false }],
    ]);
    expect(remote.calls).toEqual([5]);
    expect(llm.requests[1].messages.find((m) => m.role === 'tool')!.content).toBe('5');
  });

  it('a server gone mid-way: the call is a tool_failed tool error and the turn still completes', async () => {
    remote.http.closeAllConnections();
    await new Promise((resolve) => remote.http.close(resolve));
    llm.play({ toolCalls: [{ name: 'mcp__remote__add', args: { a: 1, b: 1 } }] }, { content: 'The tool failed.' });
    const stream = await streamTurn('Add 1 and 1');
    expect(stream.events.at(-1)?.event).toBe('done');
    const ended = stream.events.find((e) => e.event === 'tool' && e.data.phase === 'end')!;
    expect(ended.data.summary).toMatchObject({ failed: true, code: 'tool_failed' });
    expect(remote.calls).toEqual([5]);
  });
});
