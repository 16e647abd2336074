import type { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { ChatService } from '../src/chat/chat.service.js';
import { startTracing } from '../src/observability/tracing-sdk.js';
import { EndedSpans } from './support/ended-spans.js';
import { adminAuth } from './support/admin.js';
import { createCollection, uploadTo } from './support/collections.js';
import request from 'supertest';
import { freePort } from './support/service-process.js';
import { readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * The service's own spans of a streamed knowledge turn, in-process, with the
 * SDK started as src/tracing.ts starts it and an in-memory exporter. Jest
 * loads modules its own way, which the HTTP, Express, pg and Redis
 * instrumentations cannot patch: those spans, and the turn's nesting under
 * the request's span, are tested on the built service (tracing-export.e2e-spec.ts).
 */

const QUESTION = 'How do I reset the Aurora X1 router to factory settings?';

describe('OpenTelemetry spans of a streamed knowledge turn (in-memory exporter)', () => {
  const exporter = new InMemorySpanExporter();
  const processor = new SimpleSpanProcessor({ exporter });
  const ended = new EndedSpans();
  let sdk: NodeSDK;

  beforeAll(() => {
    sdk = startTracing({ spanProcessors: [ended, processor], instrumentations: [] });
  });
  afterAll(() => sdk.shutdown());

  /** Streams one turn; once every turn of the app has ended (its spans too), the spans of its trace. */
  async function tracedTurn(t: TestApp) {
    const base = await t.listen();
    const user = uniqueUser('traced');
    const { status, events } = await readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: QUESTION }),
    });
    expect(status).toBe(200);
    expect(events.at(-1)?.event).toBe('done');
    await t.app.get(ChatService).drain();
    const metadata = events[0];
    expect(metadata.event).toBe('metadata');
    const traceId: string = metadata.data.trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // The model calls' spans end once their token counts are in, a little after the calls.
    await ended.waitFor((spans) => spans.filter((span) => span.spanContext().traceId === traceId && span.name === 'chat local').length === 2, 'both chat spans');
    await processor.forceFlush();
    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    const named = (name: string) => spans.filter((span) => span.name === name);
    const one = (name: string) => {
      const found = named(name);
      expect({ name, count: found.length }).toEqual({ name, count: 1 });
      return found[0];
    };
    return { metadata: metadata.data as { run_id: string; session_id: string }, spans, named, one };
  }

  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const idOf = (span: ReadableSpan) => span.spanContext().spanId;
  /** Every attribute value of every span, as text: where the question or a passage would show. */
  const everyValue = (spans: ReadableSpan[]) => JSON.stringify(spans.map((span) => span.attributes));

  describe('content capture off (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('one trace: invoke_agent › chat local, execute_tool knowledge_search › retrieval › its stages, with the GenAI attributes; no content', async () => {
      const { metadata, spans, named, one } = await tracedTurn(t);

      const turn = one('invoke_agent agent');
      expect(parentOf(turn)).toBeUndefined();
      expect(turn.attributes).toEqual({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'agent',
        'gen_ai.conversation.id': metadata.session_id,
        'rag.run.id': metadata.run_id,
        'rag.checkpoint.operations': expect.any(Number),
        'rag.checkpoint.duration_ms': expect.any(Number),
        'rag.run_events.batches': expect.any(Number),
        'rag.run_events.count': expect.any(Number),
        'rag.run_events.duration_ms': expect.any(Number),
      });
      // The checkpointer's operations and the event batches of the turn are tallied on its span, not a span each:
      // a step's checkpoint (put, put_writes) for each of the graph's steps, the answer's events in batches.
      expect(turn.attributes['rag.checkpoint.operations']).toBeGreaterThanOrEqual(6);
      expect(turn.attributes['rag.checkpoint.duration_ms']).toBeGreaterThan(0);
      expect(turn.attributes['rag.run_events.batches']).toBeGreaterThan(0);
      expect(turn.attributes['rag.run_events.count']).toBeGreaterThanOrEqual(Number(turn.attributes['rag.run_events.batches']));
      // (The answer's last events, written once the turn's work is done, are a span each.)
      expect(named('checkpoint put')).toEqual([]);
      expect(named('checkpoint put_writes')).toEqual([]);
      const afterTurn = (span: ReadableSpan) => hrTimeToMilliseconds(span.startTime) >= hrTimeToMilliseconds(turn.endTime);
      expect(named('run_events write').filter((span) => !afterTurn(span))).toEqual([]);

      // The offline model: a call that asks for the tool, and the answer.
      const chats = named('chat local');
      expect(chats).toHaveLength(2);
      for (const chat of chats) {
        expect(chat.kind).toBe(SpanKind.CLIENT);
        expect(parentOf(chat)).toBe(idOf(turn));
        expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'local', 'gen_ai.request.model': 'local' });
        expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
        expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      }
      expect(chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);

      const tool = one('execute_tool knowledge_search');
      expect(parentOf(tool)).toBe(idOf(turn));
      expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'knowledge_search', 'gen_ai.tool.type': 'function' });
      expect(tool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));

      const retrievals = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'retrieval');
      expect(retrievals).toHaveLength(1);
      const [retrieval] = retrievals;
      expect(parentOf(retrieval)).toBe(idOf(tool));
      const collection = String(retrieval.attributes['gen_ai.data_source.id']);
      expect(retrieval.name).toBe(`retrieval ${collection}`);
      expect(retrieval.attributes).toMatchObject({ 'gen_ai.request.top_k': 4, 'rag.trace.retrieval_stage': 'initial', 'rag.trace.grade_route': 'answer' });
      expect(retrieval.attributes['rag.retrieval.documents_count']).toBeGreaterThan(0);

      // The pipeline's stages and the grading, children of the retrieval; the recall's legs, children of the recall.
      const stage = (name: string) => one(`retrieval_stage ${name}`);
      for (const name of ['recall', 'auto_merge', 'rerank', 'threshold', 'grade']) expect(parentOf(stage(name))).toBe(idOf(retrieval));
      const recall = stage('recall');
      expect(recall.attributes).toMatchObject({ 'rag.stage.name': 'recall', 'rag.stage.candidates_in': 0, 'rag.trace.recall_k': 16 });
      expect(recall.attributes['rag.stage.candidates_out']).toBe(recall.attributes['rag.trace.recalled_count']);
      expect(recall.attributes['rag.stage.candidates_out']).toBeGreaterThan(0);
      for (const leg of ['full_text', 'dense']) {
        expect(parentOf(stage(leg))).toBe(idOf(recall));
        expect(stage(leg).attributes['rag.stage.candidates_out']).toBeGreaterThan(0);
      }
      expect(stage('dense').attributes['rag.dense.backend']).toEqual(expect.any(String));
      expect(stage('auto_merge').attributes['rag.stage.candidates_in']).toBe(recall.attributes['rag.stage.candidates_out']);
      expect(stage('rerank').attributes).toMatchObject({ 'rag.trace.rerank_applied': true, 'rag.trace.rerank_model': 'local-lexical-cosine' });
      expect(stage('threshold').attributes['rag.stage.candidates_out']).toBe(retrieval.attributes['rag.retrieval.documents_count']);
      expect(stage('grade').attributes).toMatchObject({ 'rag.trace.grade_route': 'answer', 'rag.trace.grade_judge': 'local' });

      const embedding = one('embeddings local-hash-1');
      expect(parentOf(embedding)).toBe(idOf(stage('dense')));
      expect(embedding.kind).toBe(SpanKind.CLIENT);
      expect(embedding.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.provider.name': 'local', 'gen_ai.embeddings.dimension.count': 256 });

      // No content: not the question, not a prompt, not a passage.
      expect(everyValue(spans)).not.toContain('Aurora X1');
      for (const key of [
        'gen_ai.input.messages',
        'gen_ai.output.messages',
        'gen_ai.tool.call.arguments',
        'gen_ai.tool.call.result',
        'gen_ai.retrieval.query.text',
        'gen_ai.retrieval.documents',
      ]) {
        expect(spans.filter((span) => key in span.attributes).map((span) => span.name)).toEqual([]);
      }
      // The turn's own spans all succeeded (a Redis write retried under load may fail an attempt: not looked at here).
      const own = spans.filter((span) => span.attributes['gen_ai.operation.name'] !== undefined || span.attributes['rag.stage.name'] !== undefined);
      expect(own.filter((span) => span.status.code === SpanStatusCode.ERROR).map((span) => [span.name, span.attributes['error.type'], span.status.message])).toEqual([]);
    });

    it('an upload: `send ingest` where the job is queued, `process ingest` (its attempt, through the BullMQ queue in Redis) a child of it', async () => {
      const admin = adminAuth(t);
      const collection = await createCollection(t, admin, `traced-${Date.now()}`);
      const documentId = await uploadTo(t, admin, collection.id, 'traced.md', '# Traced\nA document whose ingest is traced, from its upload to its attempt.');
      await ended.waitFor((spans) => spans.some((span) => span.name === 'process ingest' && span.attributes['messaging.message.id'] === documentId), 'the attempt span');
      await processor.forceFlush();
      const finished = exporter.getFinishedSpans();
      const send = finished.filter((span) => span.name === 'send ingest' && span.attributes['messaging.message.id'] === documentId);
      const processed = finished.filter((span) => span.name === 'process ingest' && span.attributes['messaging.message.id'] === documentId);
      expect([send.length, processed.length]).toEqual([1, 1]);
      expect(send[0].kind).toBe(SpanKind.PRODUCER);
      expect(send[0].attributes).toMatchObject({ 'messaging.system': 'bullmq', 'messaging.operation.type': 'send', 'messaging.destination.name': 'ingest' });
      expect(processed[0].kind).toBe(SpanKind.CONSUMER);
      expect(processed[0].attributes).toMatchObject({
        'messaging.system': 'bullmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'ingest',
        'rag.job.attempt': 1,
      });
      expect(processed[0].spanContext().traceId).toBe(send[0].spanContext().traceId);
      expect(parentOf(processed[0])).toBe(idOf(send[0]));
      expect(processed[0].status.code).not.toBe(SpanStatusCode.ERROR);
    });
  });

  describe('OTEL_GENAI_CAPTURE_CONTENT=true', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ OTEL_GENAI_CAPTURE_CONTENT: 'true' });
    });
    afterAll(() => t.close());

    it('the prompts, the answer, the tool’s arguments and result, the query and the passages are in the spans', async () => {
      const { spans, named, one } = await tracedTurn(t);
      const [asking, answering] = named('chat local');
      const prompt = JSON.parse(String(asking.attributes['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ content?: string }> }>;
      expect(prompt.map((message) => message.role)).toEqual(['system', 'user']);
      expect(prompt[1].parts).toEqual([{ type: 'text', content: QUESTION }]);
      expect(JSON.parse(String(asking.attributes['gen_ai.output.messages']))[0].parts[0]).toMatchObject({ type: 'tool_call', name: 'knowledge_search' });
      expect(String(answering.attributes['gen_ai.input.messages'])).toContain('tool_call_response');
      expect(String(answering.attributes['gen_ai.output.messages'])).toContain('[aurora-x1-router-manual.md');

      const tool = one('execute_tool knowledge_search');
      expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({ query: QUESTION });
      expect(String(tool.attributes['gen_ai.tool.call.result'])).toContain('aurora-x1-router-manual.md');

      const retrieval = spans.find((span) => span.attributes['gen_ai.operation.name'] === 'retrieval')!;
      expect(retrieval.attributes['gen_ai.retrieval.query.text']).toBe(QUESTION);
      const documents = JSON.parse(String(retrieval.attributes['gen_ai.retrieval.documents'])) as Array<{ id: string; score: number; content: string }>;
      expect(documents.length).toBe(retrieval.attributes['rag.retrieval.documents_count']);
      expect(documents[0]).toEqual({ id: expect.any(String), score: expect.any(Number), content: expect.any(String) });
    });
  });
  describe('a failed turn', () => {
    let t: TestApp;
    beforeAll(async () => {
      // A model endpoint that refuses the connection: the turn fails with model_error.
      const port = await freePort();
      t = await createTestApp({ LLM_PROVIDER: 'openai', LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, LLM_API_KEY: 'test', LLM_MAX_RETRIES: '0' });
    });
    afterAll(() => t.close());

    it('the turn and the model call are status ERROR with error.type', async () => {
      const from = ended.spans.length;
      const res = await request(t.app.getHttpServer())
        .post('/api/chat')
        .set(t.auth(uniqueUser('failing')))
        .send({ message: QUESTION })
        .expect(502);
      expect(res.body.code).toBe('model_error');
      const turn = await ended.waitFor((spans) => spans.slice(from).find((span) => span.name === 'invoke_agent agent'), 'the failed turn’s span');
      expect(turn.status.code).toBe(SpanStatusCode.ERROR);
      expect(turn.attributes['error.type']).toBe('model_error');
      const chat = ended.spans.slice(from).find((span) => span.name === 'chat gpt-4o-mini' && span.spanContext().traceId === turn.spanContext().traceId);
      expect(chat?.status.code).toBe(SpanStatusCode.ERROR);
      expect(chat?.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'error.type': expect.any(String) });
    });
  });
});
