import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { traceAgentTurn, traceCheckpoint, traceEventBatch } from './spans.js';

/** A promise and its resolver, to hold an operation open until the test lets it end. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('a turn tallies its checkpointer operations and event batches on its span', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  const provider = new TracerProvider({ spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });
  afterEach(() => exporter.reset());

  const spansNamed = async (prefix: string) => {
    await processor.forceFlush();
    return exporter.getFinishedSpans().filter((span) => span.name.startsWith(prefix));
  };

  it('while the turn runs: counted on invoke_agent, no span of their own; after it: a span each', async () => {
    const after: Array<Promise<unknown>> = [];
    await traceAgentTurn({ agentName: 'agent', runId: 'r1' }, async () => {
      await traceCheckpoint('put', async () => undefined);
      await traceCheckpoint('put_writes', async () => undefined);
      await traceEventBatch(3, async () => undefined);
      // Begun from the turn's context once its work is done: a span of its own.
      const turnContext = context.active();
      after.push(new Promise((resolve) => setImmediate(() => resolve(context.with(turnContext, () => traceEventBatch(2, async () => undefined))))));
    });
    await Promise.all(after);
    const [turn] = await spansNamed('invoke_agent');
    expect(turn.attributes).toMatchObject({ 'rag.checkpoint.operations': 2, 'rag.run_events.batches': 1, 'rag.run_events.count': 3 });
    expect(await spansNamed('checkpoint')).toEqual([]);
    const batches = await spansNamed('run_events write');
    expect(batches.map((span) => span.attributes['rag.run_events.count'])).toEqual([2]);
    expect(batches[0].parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
  });

  it('an operation begun while the turn ran and ended after it is on the span: the span waits for it, and keeps the time the work ended', async () => {
    const batch = gate();
    let written: Promise<unknown> | undefined;
    // The spans' clock (performance.timeOrigin + performance.now()), not Date.now(): the two drift apart.
    const now = () => performance.timeOrigin + performance.now();
    let workEnded = 0;
    await traceAgentTurn({ agentName: 'agent', runId: 'r2' }, async () => {
      written = traceEventBatch(5, () => batch.opened);
      workEnded = now();
    });
    expect(await spansNamed('invoke_agent')).toEqual([]);
    const batchOpened = now();
    batch.open();
    await written;
    await new Promise((resolve) => setImmediate(resolve));
    const [turn] = await spansNamed('invoke_agent');
    expect(turn.attributes).toMatchObject({ 'rag.run_events.batches': 1, 'rag.run_events.count': 5 });
    // Ended when the work did, not when the batch it waited for did (a microsecond's slack for the float arithmetic).
    const ended = turn.endTime[0] * 1000 + turn.endTime[1] / 1e6;
    expect(ended).toBeGreaterThanOrEqual(workEnded - 0.001);
    expect(ended).toBeLessThan(batchOpened);
  });

  it('a failed operation is counted too', async () => {
    await traceAgentTurn({ agentName: 'agent', runId: 'r3' }, async () => {
      await expect(traceCheckpoint('put', () => Promise.reject(new Error('stalled')))).rejects.toThrow('stalled');
    });
    const [turn] = await spansNamed('invoke_agent');
    expect(turn.attributes['rag.checkpoint.operations']).toBe(1);
  });
});
