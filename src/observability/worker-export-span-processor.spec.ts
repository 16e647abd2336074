import { Worker } from 'node:worker_threads';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { BatchBuilder, readableSpans } from './posted-span.js';
import { WorkerExportSpanProcessor } from './worker-export-span-processor.js';

/** Ended spans of a provider with a resource of its own: a parent, a child with a link, an event, a trace state and a failure. */
async function someSpans(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'posted', 'host.name': 'h1' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('scope-a', '1.2.3');
  const remote = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: new TraceState('vendor=x,other=y') };
  const parentContext = trace.setSpanContext(ROOT_CONTEXT, remote);
  const parent = tracer.startSpan('parent', { kind: SpanKind.SERVER, attributes: { 'http.route': '/api/chat', list: ['a', 'b'], n: 3 } }, parentContext);
  const child = tracer.startSpan('child 中文', { links: [{ context: remote, attributes: { why: 'linked' } }] }, trace.setSpan(parentContext, parent));
  child.addEvent('something', { count: 2 });
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
  child.end();
  parent.end();
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

describe('posted spans: ended spans as plain data a worker can be posted, and back', () => {
  it('a batch survives a structured clone and reads back as the spans it was made of', async () => {
    const spans = await someSpans();
    const builder = new BatchBuilder();
    for (const span of spans) builder.add(span);
    expect(builder.size).toBe(2);
    const batch = structuredClone(await builder.take());
    expect(builder.size).toBe(0);
    // The resource is listed once for both spans.
    expect(batch.resources).toEqual([{ attributes: expect.objectContaining({ 'service.name': 'posted', 'host.name': 'h1' }) }]);

    const back = readableSpans(batch);
    expect(back).toHaveLength(2);
    for (const [index, original] of spans.entries()) {
      const copy = back[index];
      const plainContext = (span: ReadableSpan) => ({ ...span.spanContext(), traceState: span.spanContext().traceState?.serialize() });
      expect(plainContext(copy)).toEqual(plainContext(original));
      expect(copy.parentSpanContext?.spanId).toBe(original.parentSpanContext?.spanId);
      expect(copy.parentSpanContext?.traceState?.serialize()).toBe(original.parentSpanContext?.traceState?.serialize());
      for (const field of [
        'name',
        'kind',
        'startTime',
        'endTime',
        'duration',
        'status',
        'attributes',
        'events',
        'droppedAttributesCount',
        'droppedEventsCount',
        'droppedLinksCount',
      ] as const) {
        expect({ field, value: copy[field] }).toEqual({ field, value: original[field] });
      }
      expect(copy.ended).toBe(true);
      expect(copy.instrumentationScope).toEqual(original.instrumentationScope);
      expect(copy.resource.attributes).toEqual(original.resource.attributes);
      expect(copy.links.map((link) => ({ ...link, context: { ...link.context, traceState: link.context.traceState?.serialize() } }))).toEqual(
        original.links.map((link) => ({ ...link, context: { ...link.context, traceState: link.context.traceState?.serialize() } })),
      );
    }
    expect(back.find((span) => span.name === 'parent')?.parentSpanContext?.traceState?.get('vendor')).toBe('x');
  });

  it('spans of later batches with the same resource share one resource object (exporters group spans by it)', async () => {
    const builder = new BatchBuilder();
    const spans = await someSpans();
    builder.add(spans[0]);
    const first = readableSpans(structuredClone(await builder.take()));
    builder.add(spans[1]);
    const second = readableSpans(structuredClone(await builder.take()));
    expect(second[0].resource).toBe(first[0].resource);
    const other = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'another' }), spanProcessors: [] });
    const span = other.getTracer('t').startSpan('x') as unknown as ReadableSpan;
    (span as unknown as { end(): void }).end();
    builder.add(span);
    expect(readableSpans(structuredClone(await builder.take()))[0].resource).not.toBe(first[0].resource);
  });
});

/**
 * A stand-in for span-export-worker.js speaking its protocol: it counts the
 * spans it is posted and answers flush and shutdown; with `dieOnSpans` it
 * exits when spans first arrive, as a worker that crashed.
 */
function standInWorker(dieOnSpans = false): Worker {
  return new Worker(
    `
    const { parentPort } = require('node:worker_threads');
    let spans = [];
    parentPort.on('message', (message) => {
      if (message.kind === 'spans') {
        if (${dieOnSpans}) process.exit(3);
        spans.push(...message.batch.spans.map((span) => span.name));
        return;
      }
      parentPort.postMessage({ id: message.id, spans });
    });
    `,
    { eval: true },
  );
}

describe('WorkerExportSpanProcessor', () => {
  const provider = (processor: WorkerExportSpanProcessor, sampled = true) =>
    new TracerProvider({ spanProcessors: [processor], ...(sampled ? {} : { sampler: new AlwaysOffSampler() }) });
  /** The names of the spans the stand-in worker has received (asked through a flush). */
  const received = (worker: Worker) =>
    new Promise<string[]>((resolve) => {
      worker.once('message', (message: { spans: string[] }) => resolve(message.spans));
    });

  it('posts the sampled spans to its worker: all of them by a flush, in order; unsampled spans are not posted', async () => {
    const worker = standInWorker();
    const processor = new WorkerExportSpanProcessor(worker, { postEveryMs: 60_000, postAt: 3 });
    const tracer = provider(processor).getTracer('t');
    for (const name of ['one', 'two', 'three', 'four']) tracer.startSpan(name).end();
    provider(processor, false).getTracer('t').startSpan('unsampled').end();
    const names = received(worker);
    await processor.forceFlush();
    expect(await names).toEqual(['one', 'two', 'three', 'four']);
    await processor.shutdown();
  });

  it('posts what has waited postEveryMs without a flush', async () => {
    const worker = standInWorker();
    const processor = new WorkerExportSpanProcessor(worker, { postEveryMs: 1, postAt: 1000 });
    provider(processor).getTracer('t').startSpan('timed').end();
    // Ask the worker directly (not through forceFlush, which would post too) until the timer has posted the span.
    let names: string[] = [];
    while (!names.includes('timed')) {
      const answer = received(worker);
      worker.postMessage({ kind: 'flush', id: 0 });
      names = await answer;
    }
    expect(names).toEqual(['timed']);
    await processor.shutdown();
  });

  it('a worker that dies: the spans are dropped, nothing throws, flush and shutdown still settle', async () => {
    const worker = standInWorker(true);
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const processor = new WorkerExportSpanProcessor(worker, { postEveryMs: 60_000, postAt: 1 });
    const tracer = provider(processor).getTracer('t');
    tracer.startSpan('fatal').end();
    expect(await exited).toBe(3);
    expect(() => context.with(ROOT_CONTEXT, () => tracer.startSpan('after').end())).not.toThrow();
    await expect(processor.forceFlush()).resolves.toBeUndefined();
    await expect(processor.shutdown()).resolves.toBeUndefined();
  });

  it('shutdown flushes, then stops the worker; spans ended after it are dropped', async () => {
    const worker = standInWorker();
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const processor = new WorkerExportSpanProcessor(worker, { postEveryMs: 60_000, postAt: 1000 });
    const tracer = provider(processor).getTracer('t');
    tracer.startSpan('last').end();
    const names = received(worker);
    await processor.shutdown();
    expect(await names).toEqual(['last']);
    await exited;
    expect(() => tracer.startSpan('too late').end()).not.toThrow();
  });
});
