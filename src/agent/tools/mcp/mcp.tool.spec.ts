import type { StructuredToolInterface } from '@langchain/core/tools';
import type { McpServers } from './mcp-servers.service.js';
import { mcpToolName, McpTools, withoutPatterns } from './mcp.tool.js';

describe('MCP agent tool names', () => {
  it('are mcp__<server>__<tool>, valid OpenAI function names of at most 64 characters', () => {
    expect(mcpToolName('everything', 'echo')).toBe('mcp__everything__echo');
    expect(mcpToolName('everything', 'trigger-long-running-operation')).toBe('mcp__everything__trigger-long-running-operation');
    expect(mcpToolName('fs', 'files.read')).toMatch(/^mcp__fs__files_read_[0-9a-f]{8}$/);
    const long = mcpToolName('a'.repeat(24), 'b'.repeat(100));
    expect(long).toHaveLength(64);
    for (const name of [long, mcpToolName('x', 'ü/\u0000 ≠')]) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('never give two tools of a server one name, whatever order the server lists them in', () => {
    // `.` is not allowed in a function name; names past 64 characters are cut.
    const pairs: Array<[string, string]> = [
      ['files.read', 'files_read'],
      [`${'b'.repeat(70)}x`, `${'b'.repeat(70)}y`],
    ];
    for (const [one, other] of pairs) {
      expect(mcpToolName('fs', one)).not.toBe(mcpToolName('fs', other));
      expect(mcpToolName('fs', one)).toBe(mcpToolName('fs', one));
    }
    const created = (order: string[]) => {
      const servers = {
        toolsByServer: () => [{ server: 'fs', tools: order.map((name) => ({ name, description: name, inputSchema: { type: 'object' } })) }],
      } as unknown as McpServers;
      return new McpTools(servers).create().map((tool) => [tool.name, tool.description] as const);
    };
    const listed = ['files.read', 'files_read', 'echo'];
    expect(created(listed)).toHaveLength(3);
    expect(new Map(created(listed))).toEqual(new Map(created([...listed].reverse())));
  });
});

describe('MCP tool schemas', () => {
  const evil = { type: 'object', properties: { word: { type: 'string', pattern: '^(a|aa)+$' } }, required: ['word'] };

  it('lose their regular expressions (pattern, patternProperties, format), and keep a property named pattern and data values', () => {
    const schema = {
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: '^x+$', format: 'regex', default: { pattern: 'kept' } },
        nested: { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } }, properties: { at: { type: 'string', format: 'date-time' } } },
        list: { type: 'array', items: [{ type: 'string', pattern: '(b|bb)+' }] },
      },
      enum: [{ pattern: 'data' }],
    };
    expect(withoutPatterns(schema)).toEqual({
      type: 'object',
      properties: {
        pattern: { type: 'string', default: { pattern: 'kept' } },
        nested: { type: 'object', properties: { at: { type: 'string' } } },
        list: { type: 'array', items: [{ type: 'string' }] },
      },
      enum: [{ pattern: 'data' }],
    });
  });

  it('check arguments the model chose without a server’s pattern: a crafted argument reaches the server instead of stalling this process', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const servers = {
      maxResultChars: 1000,
      toolsVersion: 0,
      toolsByServer: () => [{ server: 'hostile', tools: [{ name: 'match', description: 'matches', inputSchema: evil }] }],
      call: async (_server: string, _tool: string, args: Record<string, unknown>) => {
        calls.push(args);
        return { text: 'ok', isError: false };
      },
    } as unknown as McpServers;
    const [tool] = new McpTools(servers).create() as StructuredToolInterface[];
    const word = `${'a'.repeat(38)}!`;
    expect(await tool.invoke({ word })).toBe('ok');
    expect(calls).toEqual([{ word }]);
  });
});
