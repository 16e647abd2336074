import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { AgentStateValues, AgentToolArtifact } from './agent-state.js';
import { AgentToolsNode } from './agent-tools-node.js';
import { routeAfterTools } from './agent.factory.js';

const question = { original_question: 'Which router?', clarification_prompt: 'X1 or X2?', retrieval_status: 'needs_choice' };

const search = tool(
  async ({ query }: { query: string }): Promise<[string, AgentToolArtifact]> =>
    query === 'ambiguous'
      ? ['X1 or X2?', { trace: { tool_used: true, junk: 1 }, pause: { question, resumeState: { original_question: 'Which router?', hitl_route: 'choose' } } }]
      : ['passages', { trace: { tool_used: true, query } }],
  { name: 'search', description: 'test', schema: z.object({ query: z.string() }), responseFormat: 'content_and_artifact' },
);
const plain = tool(async () => 'sunny', { name: 'weather', description: 'test', schema: z.object({}) });

function stateAfterCalls(calls: Array<{ id: string; name: string; args: Record<string, unknown> }>): AgentStateValues {
  return { messages: [new AIMessage({ content: '', tool_calls: calls.map((call) => ({ ...call, type: 'tool_call' as const })) })], ragTrace: null, hitl: null };
}

describe('AgentToolsNode', () => {
  const node = new AgentToolsNode(() => [search, plain]);

  it('moves a tool’s trace into the state and keeps it out of the conversation', async () => {
    const update = (await node.invoke(stateAfterCalls([{ id: 'a', name: 'search', args: { query: 'reset' } }]))) as Partial<AgentStateValues>;
    expect(update.ragTrace).toMatchObject({ tool_used: true, query: 'reset' });
    expect(update.hitl).toBeUndefined();
    const [message] = update.messages as ToolMessage[];
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message.content).toBe('passages');
    expect(message.tool_call_id).toBe('a');
    expect(message.artifact).toBeUndefined();
    expect(routeAfterTools({ hitl: update.hitl ?? null })).toBe('agent');
  });

  it('turns a question for the user into a waiting `hitl` state, without the call’s message, and routes to clarify', async () => {
    const state = stateAfterCalls([
      { id: 'a', name: 'search', args: { query: 'ambiguous' } },
      { id: 'b', name: 'weather', args: {} },
    ]);
    state.hitl = { question, resumeState: null, supplements: ['earlier answer'], waiting: false };
    const update = (await node.invoke(state)) as Partial<AgentStateValues>;
    expect(update.hitl).toEqual({ question, resumeState: { original_question: 'Which router?', hitl_route: 'choose' }, supplements: ['earlier answer'], waiting: true });
    // Normalized: the unknown field is dropped.
    expect(update.ragTrace).not.toHaveProperty('junk');
    expect((update.messages as ToolMessage[]).map((m) => m.tool_call_id)).toEqual(['b']);
    expect(routeAfterTools({ hitl: update.hitl! })).toBe('clarify');
  });

  it('answers a call of a tool that is gone (its MCP server changed its tools since the model call) as a tool_failed error, not an internal one', async () => {
    let current = [search, plain];
    const changing = new AgentToolsNode(() => current);
    current = [search];
    const errors: unknown[] = [];
    const logger = (changing as unknown as { logger: { error: (...args: unknown[]) => void } }).logger;
    logger.error = (...args: unknown[]) => errors.push(args);
    const update = (await changing.invoke(stateAfterCalls([{ id: 'w', name: 'weather', args: {} }]))) as Partial<AgentStateValues>;
    const [message] = update.messages as ToolMessage[];
    expect([message.tool_call_id, message.status, message.additional_kwargs.error_code]).toEqual(['w', 'error', 'tool_failed']);
    expect(message.content).toMatch(/weather.*not available/);
    expect(errors).toEqual([]);
  });
});
