import { SpanStatusCode, trace } from '@opentelemetry/api';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor, SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { CONTENT_MAX_CHARS, boundedContent, setContentCapture } from './content-capture.js';
import { traceFieldAttributes, traceModelCall, traceRetrieval, traceToolCall } from './spans.js';
import { currentTraceId } from './trace-context.js';
import { TransactionControlUnrecorded, untracedRequest } from './tracing-sdk.js';
import { AlwaysOffSampler, AlwaysOnSampler, SamplingDecision } from '@opentelemetry/sdk-trace';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { tracingRequested } from './tracing-switch.js';

describe('tracingRequested: tracing is off unless an endpoint or an exporter is named', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:6006/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_SERVICE_NAME: 'chat', OTEL_BSP_SCHEDULE_DELAY: '100' }, false],
  ])('%j → %s', (env, on) => {
    expect(tracingRequested(env as NodeJS.ProcessEnv)).toBe(on);
  });
});

describe('untracedRequest: probes and scrapes are not traced', () => {
  it.each([
    ['/health', true],
    ['/health/ready', true],
    ['/healthz', true],
    ['/metrics', true],
    ['/metrics?name[]=x', true],
    ['/api/chat', false],
    ['/api/health', false],
    ['/metricsx', false],
    [undefined, false],
  ])('%s → %s', (url, untraced) => {
    expect(untracedRequest(url)).toBe(untraced);
  });
});

describe('TransactionControlUnrecorded: transaction control statements are not recorded, the rest as the configured sampler says', () => {
  const decide = (sampler: TransactionControlUnrecorded, name: string) => sampler.shouldSample(ROOT_CONTEXT, 'a'.repeat(32), name, SpanKind.CLIENT, {}, []).decision;
  const on = new TransactionControlUnrecorded(new AlwaysOnSampler());
  it.each([
    'pg.query:START rag_chat',
    'pg.query:BEGIN rag_chat',
    'pg.query:COMMIT rag_chat',
    'pg.query:SET rag_chat',
    'pg.query:SAVEPOINT rag_chat',
    'pg.query:RELEASE rag_chat',
    'pg.query:COMMIT',
  ])('%s: not recorded', (name) => {
    expect(decide(on, name)).toBe(SamplingDecision.NOT_RECORD);
  });
  it.each([
    'pg.query:ROLLBACK rag_chat',
    'pg.query:SELECT rag_chat',
    'pg.query:WITH rag_chat',
    'pg.query:SETTINGS rag_chat',
    'pg.query:STARTS',
    'POST /api/chat',
    'checkpoint put',
    'SET',
  ])('%s: as the configured sampler says', (name) => {
    expect(decide(on, name)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(new TransactionControlUnrecorded(new AlwaysOffSampler()), name)).toBe(SamplingDecision.NOT_RECORD);
  });
});

describe('span helpers', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  /** Spans ended since the last reset (a model call's span ends once its token counts are in, after the call returns). */
  let endedCount = 0;
  const endWaiters = new Set<() => void>();
  const endSignal: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (_span: ReadableSpan) => {
      endedCount += 1;
      for (const waiter of [...endWaiters]) waiter();
    },
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const provider = new TracerProvider({ spanProcessors: [endSignal, processor] });
  const someSpanEnded = () =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (endedCount === 0) return;
        endWaiters.delete(check);
        resolve();
      };
      endWaiters.add(check);
      check();
    });
  const resetSpans = () => {
    exporter.reset();
    endedCount = 0;
  };
  /** The one span exported, once it ended (SimpleSpanProcessor exports a microtask later: flushed first). */
  const only = async () => {
    await someSpanEnded();
    await processor.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    return spans[0];
  };

  afterEach(() => {
    resetSpans();
    setContentCapture(false);
    trace.disable();
  });

  it('with tracing off (no provider), run the work and record nothing', async () => {
    const reply = new AIMessage('hello');
    await expect(traceModelCall({ provider: 'local', model: 'local' }, async () => reply)).resolves.toBe(reply);
    expect(currentTraceId()).toBeUndefined();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  describe('with a provider', () => {
    beforeEach(() => trace.setGlobalTracerProvider(provider));

    const prompt = [new SystemMessage('Be brief.'), new HumanMessage('What is the secret code?')];
    const reply = new AIMessage({
      content: 'It is 42.',
      usage_metadata: { input_tokens: 12, output_tokens: 4, total_tokens: 16 },
      response_metadata: { finish_reason: 'stop', model_name: 'gpt-4o-mini-2024-07-18' },
    });

    it('a model call: `chat {model}` with the reported usage, response model and finish reason; no content by default', async () => {
      await traceModelCall({ provider: 'openai', model: 'gpt-4o-mini', messages: prompt }, async () => reply);
      const span = await only();
      expect(span.name).toBe('chat gpt-4o-mini');
      expect(span.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 4,
      });
    });

    it('estimates the tokens when the model reported none', async () => {
      let estimates = 0;
      const estimate = async () => {
        estimates += 1;
        return { input: 30, output: 7 };
      };
      await traceModelCall({ provider: 'local', model: 'local' }, async () => new AIMessage('ok'), estimate);
      expect((await only()).attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 7 });
      expect(estimates).toBe(1);
    });

    it('with OTEL_GENAI_CAPTURE_CONTENT, the prompt and the answer in the conventions’ message shape', async () => {
      setContentCapture(true);
      await traceModelCall({ provider: 'openai', model: 'gpt-4o-mini', messages: prompt }, async () => reply);
      const attributes = (await only()).attributes;
      expect(JSON.parse(String(attributes['gen_ai.input.messages']))).toEqual([
        { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'What is the secret code?' }] },
      ]);
      expect(JSON.parse(String(attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'It is 42.' }] }]);
    });

    it('a failed call: status ERROR and error.type (the code of a coded error, else the class), and the error passes through', async () => {
      class TimeoutLike extends Error {}
      await expect(traceModelCall({ provider: 'local', model: 'local' }, () => Promise.reject(new TimeoutLike('slow')))).rejects.toThrow('slow');
      expect((await only()).status).toEqual({ code: SpanStatusCode.ERROR, message: 'slow' });
      expect((await only()).attributes['error.type']).toBe('TimeoutLike');
      resetSpans();
      const coded = Object.assign(new Error('no'), { code: 'model_timeout' });
      await expect(traceModelCall({ provider: 'local', model: 'local' }, () => Promise.reject(coded))).rejects.toBe(coded);
      expect((await only()).attributes['error.type']).toBe('model_timeout');
    });

    it('a tool call that ends as an error message to the model is marked failed; arguments and result only with content capture', async () => {
      const failed = new ToolMessage({ status: 'error', content: 'Error: bad query', tool_call_id: 'call-1', name: 'knowledge_search' });
      await traceToolCall({ name: 'knowledge_search', callId: 'call-1', args: { query: 'secret' } }, async () => failed);
      expect((await only()).name).toBe('execute_tool knowledge_search');
      expect((await only()).attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'knowledge_search',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': 'call-1',
        'error.type': 'tool_error',
      });
      expect((await only()).status.code).toBe(SpanStatusCode.ERROR);
      resetSpans();
      setContentCapture(true);
      await traceToolCall({ name: 'knowledge_search', callId: 'call-1', args: { query: 'secret' } }, async () => failed);
      expect((await only()).attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"query":"secret"}', 'gen_ai.tool.call.result': 'Error: bad query' });
    });

    it('a retrieval: named after its one collection, the query and passages only with content capture', async () => {
      const search = () =>
        traceRetrieval(
          { collectionIds: ['c1'], query: 'secret', topK: 4 },
          async () => 'found',
          () => ({ documents: [{ chunk_id: '7', score: 0.5, text: 'the passage' }], attributes: {} }),
        );
      await search();
      expect((await only()).name).toBe('retrieval c1');
      expect((await only()).attributes).toEqual({
        'gen_ai.operation.name': 'retrieval',
        'gen_ai.data_source.id': 'c1',
        'gen_ai.request.top_k': 4,
        'rag.retrieval.documents_count': 1,
      });
      resetSpans();
      setContentCapture(true);
      await search();
      expect((await only()).attributes['gen_ai.retrieval.query.text']).toBe('secret');
      expect(JSON.parse(String((await only()).attributes['gen_ai.retrieval.documents']))).toEqual([{ id: '7', score: 0.5, content: 'the passage' }]);
    });
  });

  it('trace fields: scalars and lists of scalars kept, passages and objects left out, the words of users and models only with content capture', () => {
    const fields = {
      recalled_count: 7,
      rerank_applied: true,
      retriever: 'hybrid',
      final_chunks: [{ text: 'x' }],
      timings: { recall: 3 },
      rewritten_query: 'secret',
      missing: null,
      options: ['a', 'b'],
    };
    expect(traceFieldAttributes(fields)).toEqual({
      'rag.trace.recalled_count': 7,
      'rag.trace.rerank_applied': true,
      'rag.trace.retriever': 'hybrid',
      'rag.trace.options': ['a', 'b'],
    });
    setContentCapture(true);
    expect(traceFieldAttributes(fields)).toMatchObject({ 'rag.trace.rewritten_query': 'secret' });
  });

  it('bounds content to CONTENT_MAX_CHARS characters, never splitting a surrogate pair', () => {
    expect(boundedContent('short')).toBe('short');
    const long = `${'a'.repeat(CONTENT_MAX_CHARS - 1)}😀tail`;
    const bounded = boundedContent(long);
    expect(bounded.endsWith('a…')).toBe(true);
    expect(bounded.length).toBe(CONTENT_MAX_CHARS);
  });
});
