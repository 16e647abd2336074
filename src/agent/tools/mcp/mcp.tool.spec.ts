import { mcpToolName } from './mcp.tool.js';

describe('MCP agent tool names', () => {
  it('are mcp__<server>__<tool>, valid OpenAI function names of at most 64 characters', () => {
    expect(mcpToolName('everything', 'echo')).toBe('mcp__everything__echo');
    expect(mcpToolName('everything', 'trigger-long-running-operation')).toBe('mcp__everything__trigger-long-running-operation');
    expect(mcpToolName('fs', 'files.read')).toBe('mcp__fs__files_read');
    const long = mcpToolName('a'.repeat(24), 'b'.repeat(100));
    expect(long).toHaveLength(64);
    for (const name of [long, mcpToolName('x', 'ü/\u0000 ≠')]) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});
