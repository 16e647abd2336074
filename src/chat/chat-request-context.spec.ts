import { ChatRequestContext } from './chat-request-context.js';

const identity = { userId: 'u', sessionId: 's', runId: 'r' };

describe('ChatRequestContext', () => {
  it('allows one knowledge retrieval per turn until the budget is reset', () => {
    const ctx = ChatRequestContext.forSync(identity);
    expect(ctx.acquireKnowledgeToolSlot()).toBe(true);
    expect(ctx.acquireKnowledgeToolSlot()).toBe(false);
    ctx.resetKnowledgeToolBudget();
    expect(ctx.acquireKnowledgeToolSlot()).toBe(true);
    ctx.close();
    ctx.resetKnowledgeToolBudget();
    expect(ctx.acquireKnowledgeToolSlot()).toBe(false);
  });

  it('stores a normalized trace, hands it out once, and lets it be peeked', () => {
    const ctx = ChatRequestContext.forSync(identity);
    ctx.storeRagTrace({ tool_used: true, junk: 1, final_chunks: [{ text: 'no source' }] }, { original_question: 'q', hitl_route: 'nope' });
    expect(ctx.peekRagTrace()).toEqual({ tool_used: true, final_chunks: [], protocol_version: 1 });
    expect(ctx.takeRagTrace()).toEqual({
      trace: { tool_used: true, final_chunks: [], protocol_version: 1 },
      resumeState: { original_question: 'q' },
    });
    expect(ctx.takeRagTrace()).toEqual({ trace: null, resumeState: null });
    ctx.storeRagTrace('not a trace');
    expect(ctx.peekRagTrace()).toBeNull();
  });

  it('emits steps with elapsed and total times for stream turns only, and none after close()', async () => {
    const events: Array<Record<string, unknown>> = [];
    const stream = ChatRequestContext.forStream(identity, (e) => events.push(e as Record<string, unknown>));
    stream.emitRagStep('retrieve', 'Searching');
    await new Promise((resolve) => setTimeout(resolve, 20));
    stream.emitRagStep('rerank', 'Reranking', { count: 3 });
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: 'step', stage: 'rerank', label: 'Reranking', count: 3 });
    expect(events[1].elapsed_ms as number).toBeGreaterThanOrEqual(15);
    expect(events[1].total_ms as number).toBeGreaterThanOrEqual(events[1].elapsed_ms as number);
    stream.close();
    stream.emitRagStep('late', 'after close');
    expect(events).toHaveLength(2);

    const sync = ChatRequestContext.forSync(identity);
    sync.useStreamWriter((e: unknown) => events.push(e as Record<string, unknown>));
    sync.emitRagStep('retrieve', 'sync turns do not stream');
    expect(events).toHaveLength(2);
  });

  it('refuses to be used before begin()', () => {
    expect(() => new ChatRequestContext().userId).toThrow(/before begin/);
  });
});
