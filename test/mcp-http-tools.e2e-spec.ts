import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { McpServers } from '../src/agent/tools/mcp/mcp-servers.service.js';
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

type ToolDefinition = { name: string; description: string; inputSchema: Record<string, unknown> };
const NUMBERS = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
const OPERATIONS: Record<string, (a: number, b: number) => number> = { add: (a, b) => a + b, multiply: (a, b) => a * b };

/**
 * A stateful MCP server over Streamable HTTP, as most remote servers are:
 * sessions (`Mcp-Session-Id`, a 404 for one it does not know, as the MCP
 * specification says), a standalone SSE stream per session for the server's
 * notifications. `tools` is shared by every instance, so a server started
 * again on the same port has the same tools but none of the old sessions;
 * `announce` sends notifications/tools/list_changed to every session.
 */
class StatefulMcpServer {
  private http?: HttpServer;
  private readonly sessions = new Map<string, { server: Server; transport: StreamableHTTPServerTransport; listening: boolean }>();
  private listeners: Array<() => void> = [];
  private held: ServerResponse[] = [];
  port = 0;
  /** Sessions started (initialize requests answered). */
  initializes = 0;
  /** Answer every tools/call 404, forgetting the session (a server that loses every session). */
  forgetEveryCall = false;
  /** Never answer a request for a new session (a server that hangs in initialize). */
  hangNewSessions = false;

  constructor(readonly tools: ToolDefinition[]) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<void> {
    this.http = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.http!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.http.address() as AddressInfo).port;
  }

  /** Forgets every session, as a restart would, without closing the port. */
  forgetSessions(): void {
    for (const { server } of this.sessions.values()) void server.close().catch(() => undefined);
    this.sessions.clear();
  }

  /** Stops hanging new sessions: the held requests are dropped. */
  releaseHeld(): void {
    this.hangNewSessions = false;
    for (const res of this.held.splice(0)) res.destroy();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sessions.values()].map(({ server }) => server.close().catch(() => undefined)));
    this.sessions.clear();
    this.http?.closeAllConnections();
    await new Promise((resolve) => this.http?.close(resolve));
  }

  /** Resolves once some session has its standalone SSE stream open (a notification sent before would reach no one). */
  async someoneListens(): Promise<void> {
    if ([...this.sessions.values()].some((session) => session.listening)) return;
    await new Promise<void>((resolve) => this.listeners.push(resolve));
  }

  async announce(tool: ToolDefinition): Promise<void> {
    this.tools.push(tool);
    await Promise.all([...this.sessions.values()].map(({ server }) => server.sendToolListChanged()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (req.method === 'GET') {
        // The standalone stream is registered by the time its headers go out (handleRequest resolves only when it closes).
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
        res.writeHead = ((...args: unknown[]) => {
          const written = writeHead(...args);
          session.listening = true;
          for (const resolve of this.listeners.splice(0)) resolve();
          return written;
        }) as typeof res.writeHead;
      }
      if (this.forgetEveryCall && req.method === 'POST') {
        const body = await new Promise<string>((resolve) => {
          let text = '';
          req.on('data', (chunk) => (text += chunk));
          req.on('end', () => resolve(text));
        });
        if (body.includes('"tools/call"')) {
          this.sessions.delete(sessionId);
          res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        await session.transport.handleRequest(req, res, JSON.parse(body));
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    if (this.hangNewSessions) {
      this.held.push(res);
      return;
    }
    const server = new Server({ name: 'stateful', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const { a, b } = call.params.arguments as { a: number; b: number };
      return { content: [{ type: 'text', text: String(OPERATIONS[call.params.name](a, b)) }] };
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.initializes += 1;
        this.sessions.set(id, { server, transport, listening: false });
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }
}

describe('MCP servers as agent tools (over Streamable HTTP)', () => {
  const llm = new FakeOpenAIServer();
  let remote: Awaited<ReturnType<typeof startRemoteMcpServer>>;
  const stateful = new StatefulMcpServer([{ name: 'add', description: 'Adds two numbers', inputSchema: NUMBERS }]);
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await llm.start();
    remote = await startRemoteMcpServer();
    await stateful.start();
    const mcpServers = [
      { name: 'stateful', transport: 'http', url: stateful.url, timeout_ms: 5000 },
      { name: 'quick', transport: 'http', url: stateful.url, timeout_ms: 400 },
      { name: 'remote', transport: 'http', url: remote.url, headers: { Authorization: TOKEN }, timeout_ms: 5000 },
      { name: 'nokey', transport: 'http', url: remote.url, timeout_ms: 5000 },
    ];
    t = await createTestApp(llm.appEnv({ LLM_TIMEOUT_MS: '5000', MCP_SERVERS: JSON.stringify(mcpServers) }));
    base = await t.listen();
  });
  afterAll(async () => {
    await t?.close();
    await stateful.stop();
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

  it('offers a tool a server announces with notifications/tools/list_changed from the next model call on', async () => {
    await stateful.someoneListens();
    await stateful.announce({ name: 'multiply', description: 'Multiplies two numbers', inputSchema: NUMBERS });
    for (;;) {
      const listed = (await listServers()).find((server) => server.name === 'stateful')!;
      if (listed.tools.some((tool: { name: string }) => tool.name === 'multiply')) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    llm.play({ toolCalls: [{ name: 'mcp__stateful__multiply', args: { a: 6, b: 7 } }] }, { content: 'It is 42.' });
    const stream = await streamTurn('Multiply 6 and 7');
    expect(toolEvents(stream.events)[1]).toEqual(['mcp__stateful__multiply', 'end', { output: '42', truncated: false }]);
  });

  it('starts a new session with a remote server that restarted and forgot ours, and the call still succeeds', async () => {
    llm.play({ toolCalls: [{ name: 'mcp__stateful__add', args: { a: 2, b: 2 } }] }, { content: 'It is 4.' });
    expect(toolEvents((await streamTurn('Add 2 and 2')).events)[1]).toEqual(['mcp__stateful__add', 'end', { output: '4', truncated: false }]);
    const before = (await listServers()).find((server) => server.name === 'stateful')!;

    await stateful.stop();
    await stateful.start();
    llm.reset();
    llm.play({ toolCalls: [{ name: 'mcp__stateful__add', args: { a: 3, b: 4 } }] }, { content: 'It is 7.' });
    const stream = await streamTurn('Add 3 and 4');
    expect(toolEvents(stream.events)[1]).toEqual(['mcp__stateful__add', 'end', { output: '7', truncated: false }]);
    const after = (await listServers()).find((server) => server.name === 'stateful')!;
    expect(after).toMatchObject({ status: 'up', tools: expect.arrayContaining([expect.objectContaining({ name: 'add' })]) });
    expect(after.restarts).toBeGreaterThan(before.restarts);
  });

  it('sends again every call that met the loss of its session, however many were on their way', async () => {
    const servers = t.app.get(McpServers);
    stateful.forgetSessions();
    const sums = await Promise.all(Array.from({ length: 20 }, (_, i) => servers.call('stateful', 'add', { a: i, b: 100 })));
    expect(sums.map((sum) => sum.text)).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 100)));
  });

  it('does not start a session per call with a server that forgets every session, and a call waits for a new one only within its time', async () => {
    const servers = t.app.get(McpServers);
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'ok',
        (error: { code?: string }) => error.code ?? 'other',
      );
    stateful.forgetEveryCall = true;
    const before = stateful.initializes;
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i += 1) outcomes.push(await outcome(servers.call('stateful', 'add', { a: 1, b: 1 })));
    stateful.forgetEveryCall = false;
    expect(outcomes.every((o) => o === 'tool_failed' || o === 'tool_timeout')).toBe(true);
    // One new session when the loss was first met; later ones wait for the backoff.
    expect(stateful.initializes - before).toBeLessThanOrEqual(3);

    // A server that hangs in initialize after losing our session: the call ends as a tool_timeout within its 400 ms.
    // First a session with it: on a loaded machine a call may take longer than its 400 ms, so until one answers.
    let first = await outcome(servers.call('quick', 'add', { a: 1, b: 2 }));
    for (let attempt = 1; first === 'tool_timeout' && attempt < 20; attempt += 1) first = await outcome(servers.call('quick', 'add', { a: 1, b: 2 }));
    expect(first).toBe('ok');
    stateful.hangNewSessions = true;
    stateful.forgetSessions();
    expect(await outcome(servers.call('quick', 'add', { a: 1, b: 2 }))).toBe('tool_timeout');
    stateful.releaseHeld();
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
    // The failed connection starts it again; while it cannot start, its tools are not offered.
    for (;;) {
      const listed = (await listServers()).find((server) => server.name === 'remote')!;
      if (listed.status === 'down') {
        expect(listed).toMatchObject({ tools: [], last_error: expect.any(String), next_attempt_at: expect.any(String) });
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    llm.reset();
    llm.play({ content: 'No tools.' });
    await streamTurn('Add 1 and 1 again');
    const offered = ((llm.requests[0].tools ?? []) as unknown as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    expect(offered).not.toContain('mcp__remote__add');
  });
});
