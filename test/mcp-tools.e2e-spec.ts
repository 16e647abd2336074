import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { McpServers } from '../src/agent/tools/mcp/mcp-servers.service.js';
import { loadConfig } from '../src/config/app-config.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { readSse } from './support/sse-client.js';

const require = createRequire(import.meta.url);
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const memory = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
const invalidSchemaServer = join(process.cwd(), 'test/fixtures/mcp-invalid-schema-server.mjs');
const lateServer = join(process.cwd(), 'test/fixtures/mcp-late-server.mjs');
const crashServer = join(process.cwd(), 'test/fixtures/mcp-crash-server.mjs');
const listChangedServer = join(process.cwd(), 'test/fixtures/mcp-list-changed-server.mjs');

describe('MCP servers as agent tools (over stdio)', () => {
  const llm = new FakeOpenAIServer();
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const memoryDir = mkdtempSync(join(tmpdir(), 'mcp-memory-'));
  const lateMarker = join(memoryDir, 'late-server-may-start');
  let t: TestApp;
  let base: string;
  let servers: McpServers;

  beforeAll(async () => {
    await llm.start();
    const mcpServers = [
      { name: 'everything', transport: 'stdio', command: process.execPath, args: [everything, 'stdio'], timeout_ms: 30000, tools: ['echo', 'trigger-long-running-operation'] },
      { name: 'slow', transport: 'stdio', command: process.execPath, args: [everything, 'stdio'], timeout_ms: 300, tools: ['trigger-long-running-operation'] },
      { name: 'memory', transport: 'stdio', command: process.execPath, args: [memory], env: { MEMORY_FILE_PATH: join(memoryDir, 'memory.jsonl') } },
      { name: 'fixture', transport: 'stdio', command: process.execPath, args: [invalidSchemaServer] },
      { name: 'broken', transport: 'stdio', command: join(memoryDir, 'no-such-command') },
      { name: 'late', transport: 'stdio', command: process.execPath, args: [lateServer, lateMarker] },
      { name: 'crashy', transport: 'stdio', command: process.execPath, args: [crashServer] },
      { name: 'early', transport: 'stdio', command: process.execPath, args: [listChangedServer, 'early'] },
      { name: 'flood', transport: 'stdio', command: process.execPath, args: [listChangedServer, 'flood'] },
    ];
    t = await createTestApp(llm.appEnv({ LLM_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn', MCP_SERVERS: JSON.stringify(mcpServers), MCP_MAX_RESULT_CHARS: '200' }), sink);
    base = await t.listen();
    servers = t.app.get(McpServers);
  });
  afterAll(async () => {
    await t?.close();
    await llm.stop();
    rmSync(memoryDir, { recursive: true, force: true });
  });
  beforeEach(() => llm.reset());

  const admin = () => t.auth(uniqueUser('admin'), { role: 'admin' });
  const listServers = async () => (await request(t.app.getHttpServer()).get('/api/mcp/servers').set(admin()).expect(200)).body as Array<Record<string, any>>;
  const streamTurn = (message: string) =>
    readSse(`${base}/api/chat/stream`, { method: 'POST', headers: { ...t.auth(uniqueUser()), 'Content-Type': 'application/json' }, body: JSON.stringify({ message }) });
  const toolEvents = (events: Array<{ event: string; data: any }>) => events.filter((e) => e.event === 'tool').map((e) => [e.data.name, e.data.phase, e.data.summary]);
  const waitForStatus = async (name: string, status: string, also: () => boolean = () => true) => {
    for (;;) {
      const server = (await listServers()).find((s) => s.name === name)!;
      if (server.status === status && also()) return server;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  it('lists the servers, their status and their tools to administrators, the allow-list honoured', async () => {
    const list = await listServers();
    const byName = Object.fromEntries(list.map((s) => [s.name, s]));
    expect(Object.keys(byName)).toEqual(['everything', 'slow', 'memory', 'fixture', 'broken', 'late', 'crashy', 'early', 'flood']);
    expect(byName.everything).toMatchObject({ transport: 'stdio', status: 'up', attempts: 0, last_error: null });
    expect(byName.everything.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['echo', 'trigger-long-running-operation']);
    expect(byName.memory.tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(['create_entities', 'read_graph', 'search_nodes', 'open_nodes']));
    expect(byName.memory.tools.every((tool: { description: string }) => typeof tool.description === 'string')).toBe(true);
    // A server that never started is listed as down, and the service is up.
    expect(byName.broken).toMatchObject({ status: expect.stringMatching(/^(down|restarting)$/), tools: [] });
    expect(byName.broken.attempts).toBeGreaterThanOrEqual(1);
    expect(byName.broken.last_error).toMatch(/ENOENT|no-such-command/);
    await request(t.app.getHttpServer()).get('/health/ready').expect(200);
  });

  it('refuses the list to users who are not administrators, and to anonymous callers', async () => {
    const res = await request(t.app.getHttpServer()).get('/api/mcp/servers').set(t.auth(uniqueUser())).expect(403);
    expect(res.body.code).toBe('forbidden');
    await request(t.app.getHttpServer()).get('/api/mcp/servers').expect(401);
    // No route takes a server name or command from a request.
    await request(t.app.getHttpServer()).get('/api/mcp/servers/everything').set(admin()).expect(404);
    await request(t.app.getHttpServer()).post('/api/mcp/servers').set(admin()).send({ name: 'x', transport: 'stdio', command: 'sh' }).expect(404);
  });

  it('skips a tool with an invalid schema with a warning; the server’s valid tool still works', async () => {
    const fixture = (await listServers()).find((s) => s.name === 'fixture')!;
    expect(fixture.tools.map((tool: { name: string }) => tool.name)).toEqual(['shout']);
    expect(lines.some((line) => line.level === 40 && /fixture: skipped 1 item\(s\) of its tool list: tool broken: invalid definition/.test(String(line.msg)))).toBe(true);
    llm.play({ toolCalls: [{ name: 'mcp__fixture__shout', args: { text: 'quiet words' } }] }, { content: 'Done.' });
    const stream = await streamTurn('Shout it');
    expect(toolEvents(stream.events)).toEqual([
      ['mcp__fixture__shout', 'start', { args: { text: 'quiet words' } }],
      ['mcp__fixture__shout', 'end', { output: 'QUIET WORDS', truncated: false }],
    ]);
  });

  it('offers the MCP tools to the model with their schemas, and the echo reaches the answer, the tool event and the trace', async () => {
    llm.play({ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'hello from MCP' } }] }, { content: 'The server said: Echo: hello from MCP' });
    const user = uniqueUser();
    const res = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Echo hello' }).expect(200);
    const offered = llm.requests[0].tools as unknown as Array<{ function: { name: string; parameters: Record<string, any> } }>;
    const names = offered.map((tool) => tool.function.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__trigger-long-running-operation', 'mcp__memory__read_graph', 'mcp__fixture__shout']));
    expect(names.filter((name) => name.startsWith('mcp__everything__'))).toHaveLength(2);
    expect(names.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(offered.find((tool) => tool.function.name === 'mcp__everything__echo')!.function.parameters.properties.message).toMatchObject({ type: 'string' });
    const toolMessage = llm.requests[1].messages.find((m) => m.role === 'tool');
    expect(toolMessage!.content).toBe('Echo: hello from MCP');
    expect(res.body.response).toBe('The server said: Echo: hello from MCP');
    const messages = (await request(t.app.getHttpServer()).get(`/api/sessions/${res.body.session_id}/messages`).set(t.auth(user)).expect(200)).body;
    const answer = (Array.isArray(messages) ? messages : messages.messages).find((m: { type: string }) => m.type === 'ai');
    expect(answer.tools).toEqual(['mcp__everything__echo']);

    llm.play({ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'streamed' } }] }, { content: 'Echo: streamed' });
    const stream = await streamTurn('Echo streamed');
    expect(toolEvents(stream.events)).toEqual([
      ['mcp__everything__echo', 'start', { args: { message: 'streamed' } }],
      ['mcp__everything__echo', 'end', { output: 'Echo: streamed', truncated: false }],
    ]);
  });

  it('calls server-memory’s tools, and bounds an oversized result to MCP_MAX_RESULT_CHARS', async () => {
    llm.play(
      { toolCalls: [{ name: 'mcp__memory__create_entities', args: { entities: [{ name: 'Aurora', entityType: 'router', observations: ['blue'] }] } }] },
      { content: 'Stored.' },
    );
    await streamTurn('Remember Aurora');
    expect(llm.requests[1].messages.find((m) => m.role === 'tool')!.content).toContain('Aurora');

    llm.reset();
    llm.play({ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'x'.repeat(5000) } }] }, { content: 'Long.' });
    await streamTurn('Echo a lot');
    const content = llm.requests[1].messages.find((m) => m.role === 'tool')!.content as string;
    expect(content.startsWith(`Echo: ${'x'.repeat(194)}\n[truncated: the result had 5006 characters, 200 are shown]`)).toBe(true);
  });

  it('offers the tools of a server that first comes up after start-up from the next turn on, and calls them', async () => {
    const offeredNames = (index: number) => ((llm.requests[index].tools ?? []) as unknown as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    await waitForStatus('late', 'down');
    llm.play({ content: 'Not yet.' });
    await streamTurn('Shout it, later');
    expect(offeredNames(0)).toContain('mcp__fixture__shout');
    expect(offeredNames(0)).not.toContain('mcp__late__shout');

    writeFileSync(lateMarker, '');
    const up = await waitForStatus('late', 'up');
    expect(up.tools.map((tool: { name: string }) => tool.name)).toEqual(['shout']);
    for (const route of ['stream', 'openai'] as const) {
      llm.reset();
      llm.play({ toolCalls: [{ name: 'mcp__late__shout', args: { text: `late ${route}` } }] }, { content: 'Done.' });
      if (route === 'stream') {
        const stream = await streamTurn('Shout it now');
        expect(toolEvents(stream.events)).toEqual([
          ['mcp__late__shout', 'start', { args: { text: 'late stream' } }],
          ['mcp__late__shout', 'end', { output: 'LATE STREAM', truncated: false }],
        ]);
      } else {
        // The stateless graph of the OpenAI-compatible route sees the new tools too.
        await request(t.app.getHttpServer())
          .post('/v1/chat/completions')
          .set(t.auth(uniqueUser()))
          .send({ model: 'rag-agent', messages: [{ role: 'user', content: 'Shout it now' }] })
          .expect(200);
      }
      expect(offeredNames(0)).toEqual(expect.arrayContaining(['mcp__late__shout', 'mcp__fixture__shout', 'mcp__everything__echo']));
      expect(llm.requests[1].messages.find((m) => m.role === 'tool')!.content).toBe(`LATE ${route.toUpperCase()}`);
    }
  });

  it('restarts a server that dies as soon as it is up ever more slowly, and bounds the tools it lists', async () => {
    const restartDelays = () =>
      lines
        .map((line) => /^MCP server crashy stopped \(.*\); restart (\d+) in (\d+) ms$/.exec(String(line.msg)))
        .filter((match) => match !== null)
        .map((match) => [Number(match[1]), Number(match[2])]);
    const crashy = await waitForStatus('crashy', 'restarting', () => restartDelays().length >= 4);
    const delays = restartDelays().slice(0, 4);
    expect(delays.map(([restart]) => restart)).toEqual([1, 2, 3, 4]);
    // Each restart waits twice as long as the one before: the server was never up for long.
    for (let i = 1; i < delays.length; i++) expect(delays[i][1]).toBe(delays[i - 1][1] * 2);
    expect(crashy.restarts).toBeGreaterThanOrEqual(4);
    expect(Date.parse(crashy.next_attempt_at)).toBeGreaterThan(0);
    expect(crashy.last_error).toMatch(/closed the connection/);
    // At most 128 tools of a server, none with a schema over 32 000 characters.
    expect(crashy.tools).toHaveLength(128);
    expect(crashy.tools.map((tool: { name: string }) => tool.name)).not.toContain('huge');
    expect(lines.map((line) => String(line.msg))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^MCP server crashy: skipped 2 item\(s\) of its tool list: tool huge: its input schema is over 32000 .*; the rest: the server lists more than 128 usable tools/,
        ),
      ]),
    );
  });

  it('follows tools/list_changed sent while it was still starting, and lists once at a time however many notices come', async () => {
    const listed = async (name: string) => (await waitForStatus(name, 'up', () => true)).tools as Array<{ name: string; description: string }>;
    for (const name of ['early', 'flood']) {
      let tools = await listed(name);
      while (!tools.some((tool) => tool.description.startsWith('after the change'))) {
        await new Promise((resolve) => setImmediate(resolve));
        tools = await listed(name);
      }
      expect(tools.map((tool) => tool.name).sort()).toEqual(['a', 'b', 'stats']);
      expect(tools.find((tool) => tool.name === 'stats')!.description).toBe('after the change; most listings at once 1');
    }
  });

  it('reports a hanging tool as tool_timeout without failing the turn', async () => {
    llm.play({ toolCalls: [{ name: 'mcp__slow__trigger-long-running-operation', args: { duration: 30, steps: 1 } }] }, { content: 'It took too long.' });
    const stream = await streamTurn('Run the long operation');
    expect(toolEvents(stream.events)[1]).toEqual(['mcp__slow__trigger-long-running-operation', 'end', { failed: true, code: 'tool_timeout' }]);
    expect(llm.requests[1].messages.find((m) => m.role === 'tool')!.content).toMatch(/no answer within 300 ms/);
    expect(stream.events.at(-1)).toMatchObject({ event: 'done', data: { response: 'It took too long.' } });
  });

  it('reports a server killed mid-call as tool_failed, finishes the turn, restarts the server and calls it again', async () => {
    const pid = servers.pidOf('everything')!;
    expect(pid).toBeGreaterThan(0);
    const call = servers.call;
    // Kill the server once the long call is on its way.
    servers.call = (server, tool, args, signal) => {
      const pending = call.call(servers, server, tool, args, signal);
      if (tool === 'trigger-long-running-operation') setImmediate(() => process.kill(pid, 'SIGKILL'));
      return pending;
    };
    try {
      llm.play({ toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', args: { duration: 30, steps: 1 } }] }, { content: 'The server went away.' });
      const stream = await streamTurn('Run the long operation');
      expect(toolEvents(stream.events)[1]).toEqual(['mcp__everything__trigger-long-running-operation', 'end', { failed: true, code: 'tool_failed' }]);
      expect(stream.events.at(-1)).toMatchObject({ event: 'done', data: { response: 'The server went away.' } });
    } finally {
      servers.call = call;
    }
    const restarted = await waitForStatus('everything', 'up', () => servers.pidOf('everything') !== pid);
    expect(restarted.tools).toHaveLength(2);
    llm.reset();
    llm.play({ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'again' } }] }, { content: 'Echo: again' });
    const stream = await streamTurn('Echo again');
    expect(toolEvents(stream.events)[1]).toEqual(['mcp__everything__echo', 'end', { output: 'Echo: again', truncated: false }]);
  });
});

describe('MCP servers at shutdown', () => {
  it('stops a start that is under way (a server that never answers initialize) instead of waiting for it', async () => {
    const mute = { name: 'mute', transport: 'stdio', command: process.execPath, args: ['-e', 'process.stdin.resume()'] };
    const servers = new McpServers(loadConfig({ MCP_SERVERS: JSON.stringify([mute]) }));
    const starting = servers.onModuleInit();
    await servers.onApplicationShutdown();
    await starting;
    expect(servers.list()[0]).toMatchObject({ name: 'mute', status: 'down' });
  }, 10_000);
});

describe('MCP_SERVERS validation', () => {
  it.each([
    ['not JSON', 'must be a JSON array of MCP servers'],
    ['{"name":"a"}', 'expected array'],
    ['[{"name":"a b","transport":"stdio","command":"node"}]', 'name must be 1 to 24 letters'],
    ['[{"name":"a","transport":"stdio"}]', 'a stdio server needs command'],
    ['[{"name":"a","transport":"http","url":"file:///etc/passwd"}]', 'url must be an http(s) URL'],
    ['[{"name":"a","transport":"stdio","command":"node"},{"name":"a","transport":"stdio","command":"node"}]', 'server names must be unique'],
    ['[{"name":"a","transport":"stdio","command":"node","shell":true}]', 'shell'],
  ])('refuses %s at start-up', (value, message) => {
    expect(() => loadConfig({ MCP_SERVERS: value })).toThrow(expect.objectContaining({ message: expect.stringContaining(message) }));
  });
});
