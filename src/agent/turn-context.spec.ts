import { MissingTurnContextError, TURN_CONTEXT_KEY, TurnContext, turnContextOf } from './turn-context.js';

const identity = { userId: 'u', sessionId: 's', runId: 'r' };

describe('TurnContext', () => {
  it('allows each tool its budget of calls per turn until the budgets are reset, and none after close()', () => {
    const turn = new TurnContext({ ...identity, mode: 'sync' });
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(true);
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(false);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(true);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(true);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(false);
    turn.resetToolBudgets();
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(true);
    turn.close();
    turn.resetToolBudgets();
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(false);
  });

  it('stores a normalized trace, hands it out once, and lets it be peeked', () => {
    const turn = new TurnContext({ ...identity, mode: 'sync' });
    // Typed at compile time, normalized at run time all the same (a plug-in may be plain JavaScript).
    turn.storeRagTrace({ tool_used: true, junk: 1, final_chunks: [{ text: 'no source' }] } as never, { original_question: 'q', hitl_route: 'nope' } as never);
    expect(turn.peekRagTrace()).toEqual({ tool_used: true, final_chunks: [], protocol_version: 1 });
    expect(turn.takeRagTrace()).toEqual({
      trace: { tool_used: true, final_chunks: [], protocol_version: 1 },
      resumeState: { original_question: 'q' },
    });
    expect(turn.takeRagTrace()).toEqual({ trace: null, resumeState: null });
    turn.storeRagTrace('not a trace' as never);
    expect(turn.peekRagTrace()).toBeNull();
  });

  it('reports steps through the node’s writer with elapsed and total times, for stream turns only, and none after close()', () => {
    const events: Array<Record<string, unknown>> = [];
    const writer = (e: unknown) => events.push(e as Record<string, unknown>);
    const stream = new TurnContext({ ...identity, mode: 'stream' });
    const step = stream.stepReporter(writer);
    step('retrieve', 'Searching');
    step('rerank', 'Reranking', { count: 3 });
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: 'step', stage: 'rerank', label: 'Reranking', count: 3 });
    expect(events[1].elapsed_ms).toEqual(expect.any(Number));
    expect(events[1].total_ms as number).toBeGreaterThanOrEqual(events[1].elapsed_ms as number);
    stream.stepReporter(undefined)('no writer', 'nothing to write to');
    stream.close();
    step('late', 'after close');
    expect(events).toHaveLength(2);

    new TurnContext({ ...identity, mode: 'sync' }).stepReporter(writer)('retrieve', 'sync turns do not stream');
    expect(events).toHaveLength(2);
  });

  it('travels in the run config and is read back with turnContextOf', () => {
    const turn = new TurnContext({ ...identity, mode: 'sync' });
    expect(turnContextOf({ configurable: turn.configurable('thread-1') })).toBe(turn);
    expect(turn.configurable('thread-1').thread_id).toBe('thread-1');
    expect(() => turnContextOf({ configurable: { [TURN_CONTEXT_KEY]: { userId: 'forged' } } })).toThrow(MissingTurnContextError);
    expect(() => turnContextOf(undefined)).toThrow(MissingTurnContextError);
  });
});
