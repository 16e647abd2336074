import { RetrievalScope } from '../knowledge/collections/retrieval-scope.js';
import { AgentRunContextSchema, TurnContext } from './turn-context.js';

const identity = { userId: 'u', sessionId: 's', runId: 'r' };
const scope = RetrievalScope.of(['00000000-0000-4000-8000-000000000001']);

describe('TurnContext', () => {
  it('allows each tool its budget of calls in its own turn only, and none after close()', () => {
    const turn = new TurnContext({ ...identity, mode: 'sync' }, { scope });
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(true);
    expect(turn.acquireToolCall('knowledge_search', 1)).toBe(false);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(true);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(true);
    expect(turn.acquireToolCall('get_weather', 2)).toBe(false);
    // Another turn (of the same session and user) has a budget of its own.
    const next = TurnContext.of({ ...identity, runId: 'r2' }, 'sync', { scope });
    expect(next.acquireToolCall('knowledge_search', 1)).toBe(true);
    next.close();
    expect(next.acquireToolCall('get_weather', 2)).toBe(false);
  });

  it('reports steps through the node’s writer with elapsed and total times, for stream turns only, and none after close()', () => {
    const events: Array<Record<string, unknown>> = [];
    const writer = (e: unknown) => events.push(e as Record<string, unknown>);
    const stream = new TurnContext({ ...identity, mode: 'stream' }, { scope });
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

    new TurnContext({ ...identity, mode: 'sync' }, { scope }).stepReporter(writer)('retrieve', 'sync turns do not stream');
    expect(events).toHaveLength(2);
  });

  it('is the graph run’s context: the schema takes a TurnContext and refuses a look-alike', () => {
    const turn = TurnContext.of(identity, 'stream', { sampling: { temperature: 0.2 }, scope });
    expect(turn.sampling).toEqual({ temperature: 0.2 });
    expect(turn.scope).toBe(scope);
    expect(AgentRunContextSchema.parse({ turn }).turn).toBe(turn);
    expect(AgentRunContextSchema.safeParse({ turn: { ...identity, mode: 'sync', acquireToolCall: () => true } }).success).toBe(false);
    expect(AgentRunContextSchema.safeParse({}).success).toBe(false);
  });
});
