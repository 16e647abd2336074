import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { createClient } from '@keyv/redis';
import { ERROR_CODE_STATUS } from '../src/common/coded-error.js';
import { messagesCacheKey } from '../src/session/session-cache-keys.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_REDIS_URL } from './support/test-env.js';

/** The field list of protocol.md ("Trace"), written out here as the test's own oracle. */
const PROTOCOL_TRACE_FIELDS = [
  'tool_used',
  'tool_name',
  'query',
  'retrieval_stage',
  'complexity',
  'complexity_reason',
  'sub_questions',
  'sub_agent_count',
  'merged_evidence_count',
  'retrieval_mode',
  'pipeline_id',
  'recall_k',
  'recall_k_source',
  'recall_k_config_error',
  'recall_multiplier',
  'top_k',
  'recalled_count',
  'initial_chunk_level',
  'auto_merge_enabled',
  'auto_merge_applied',
  'auto_merge_threshold',
  'auto_merge_replaced_count',
  'auto_merge_level',
  'candidates_after_merge',
  'rerank_enabled',
  'rerank_applied',
  'rerank_model',
  'rerank_endpoint',
  'rerank_error',
  'rerank_timeout_ms',
  'min_relevance',
  'rerank_input_count',
  'rerank_output_count',
  'after_threshold_count',
  'final_empty',
  'initial_chunks',
  'grade_route',
  'evidence_status',
  'evidence_relevance',
  'evidence_answerability',
  'evidence_ambiguity',
  'grade_confidence',
  'grade_reason',
  'rewrite_mode',
  'rewritten_query',
  'step_back_question',
  'hypothetical_doc',
  'rewrite_chunks',
  'final_chunks',
  'missing_conditions',
  'clarification_prompt',
  'clarification_options',
  'hitl_resumed',
  'user_supplement',
  'hitl_resume_strategy',
  'pre_resume_snapshot',
  'hitl_chunks',
  'timings',
];

const MESSY_TRACE = {
  tool_used: true,
  query: '保修政策',
  internal_debug: { prompt: 'should never leave the server' },
  grade_confidence: 7,
  evidence_ambiguity: 'something-new',
  final_chunks: [{ source: 'warranty.md', page: 2, text: '两年保修', score: 0.91, embedding: [0.1, 0.2] }, { text: 'chunk without a source' }],
  sub_traces: [{ query: 'part 1', model_scratchpad: 'hidden', final_chunks: [{ text: 'no source' }] }],
};

const NORMALIZED = {
  tool_used: true,
  query: '保修政策',
  final_chunks: [{ source: 'warranty.md', page: 2, text: '两年保修', score: 0.91 }],
  sub_traces: [{ query: 'part 1', final_chunks: [] }],
  protocol_version: 1,
};

describe('Traces leave the service normalized; the OpenAPI document describes them', () => {
  let t: TestApp;
  const redis = createClient({ url: TEST_REDIS_URL });
  beforeAll(async () => {
    t = await createTestApp();
    await redis.connect();
  });
  afterAll(async () => {
    await redis.quit();
    await t.close();
  });

  it('serves a messy trace stored by an older writer in normalized form', async () => {
    const user = uniqueUser('legacy');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [{ type: 'human', content: 'q' }]);
    // Written straight into the table, as an older version without normalization would have.
    await t.dataSource.query(`INSERT INTO chat_messages (session_id, seq, type, content, rag_trace) VALUES ($1, 2, 'ai', 'a', $2::jsonb)`, [session, JSON.stringify(MESSY_TRACE)]);
    const res = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(res.body.messages[1].rag_trace).toEqual(NORMALIZED);
  });

  it('normalizes messy traces found in the cache as well', async () => {
    const user = uniqueUser('cached-legacy');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [{ type: 'human', content: 'q' }]);
    const fields = { status: 'complete', run_id: null, feedback: null, timestamp: new Date().toISOString() };
    const cached = [
      { ...fields, id: randomUUID(), seq: 1, type: 'human', content: 'q', rag_trace: null },
      { ...fields, id: randomUUID(), seq: 2, type: 'ai', content: 'a', rag_trace: MESSY_TRACE },
    ];
    const [{ version }] = await t.dataSource.query('SELECT version::text AS version FROM chat_sessions WHERE id = $1', [session]);
    await redis.set(messagesCacheKey(user, session), JSON.stringify({ value: { format: 2, version, messages: cached }, expires: Date.now() + 60_000 }));
    const res = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(res.body.messages).toHaveLength(2); // proves the cache entry was used
    expect(res.body.messages[1].rag_trace).toEqual(NORMALIZED);
  });

  it('serves /docs and a /docs-json that passes an OpenAPI validator', async () => {
    await request(t.app.getHttpServer()).get('/docs').expect(200).expect('Content-Type', /html/);
    const res = await request(t.app.getHttpServer()).get('/docs-json').expect(200);
    const doc = res.body;
    const validation = await new Validator().validate(structuredClone(doc));
    expect(validation.errors).toBeUndefined();
    expect(validation.valid).toBe(true);

    const schemas = doc.components.schemas;
    const traceFields = Object.keys(schemas.RagTrace.properties);
    for (const field of PROTOCOL_TRACE_FIELDS) expect(traceFields).toContain(field);
    expect(traceFields).toEqual(expect.arrayContaining(['sub_traces', 'protocol_version']));
    for (const field of PROTOCOL_TRACE_FIELDS) expect(Object.keys(schemas.RagSubTrace?.properties ?? schemas.RagTraceFields.properties)).toContain(field);
    expect(schemas.RagTrace.properties.sub_traces.items.$ref).toMatch(/RagSubTrace/);
    expect(Object.keys(schemas.RetrievedChunk.properties).sort()).toEqual(
      ['chunk_id', 'collection_id', 'dense_rank', 'fulltext_rank', 'location', 'page', 'rerank_score', 'rrf_rank', 'score', 'source', 'text'].sort(),
    );
    expect(schemas.RetrievedChunk.properties.location).toMatchObject({ nullable: true });
    expect(Object.keys(schemas.ChunkLocation.properties).sort()).toEqual(['heading_path', 'row', 'sheet']);
    expect(schemas.RagTrace.properties.grade_confidence).toMatchObject({ minimum: 0, maximum: 1 });
    expect(schemas.RagTrace.properties.sub_questions.maxItems).toBe(4);
    expect(Object.keys(schemas.PendingHitlState.properties)).toEqual(
      expect.arrayContaining(['task_id', 'original_question', 'clarification_prompt', 'options', 'hitl_type', 'retrieval_status', 'user_supplement', 'created_at']),
    );
    expect(Object.keys(schemas.HitlResumeState?.properties ?? {})).toEqual(
      expect.arrayContaining(['original_question', 'hitl_route', 'retrieval_status', 'rewrite_count', 'complexity', 'complexity_reason', 'sub_questions']),
    );

    // Every route, with its responses and bearer auth.
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/api/chat',
        '/api/chat/runs/{run_id}',
        '/api/chat/runs/{run_id}/cancel',
        '/api/chat/runs/{run_id}/stream',
        '/api/chat/runs/{run_id}/ticket',
        '/api/chat/stream',
        '/api/chat/ui',
        '/api/chat/ui/{id}/stream',
        '/api/keys',
        '/api/keys/{id}',
        '/v1/chat/completions',
        '/v1/models',
        '/v1/models/{model}',
        '/api/knowledge/chunks/{chunk_id}',
        '/api/knowledge/collections',
        '/api/knowledge/collections/{id}',
        '/api/knowledge/collections/{id}/access',
        '/api/knowledge/collections/{id}/documents',
        '/api/knowledge/collections/{id}/documents/{document_id}',
        '/api/knowledge/documents',
        '/api/knowledge/documents/{id}',
        '/api/knowledge/jobs',
        '/api/knowledge/jobs/{id}',
        '/api/knowledge/jobs/{id}/events',
        '/api/knowledge/search',
        '/api/mcp/servers',
        '/api/sessions',
        '/api/sessions/{session_id}',
        '/api/sessions/{session_id}/messages',
        '/api/sessions/{session_id}/messages/{message_id}/feedback',
        '/health',
        '/health/ready',
        '/langgraph/assistants',
        '/langgraph/assistants/count',
        '/langgraph/assistants/search',
        '/langgraph/assistants/{assistant_id}',
        '/langgraph/assistants/{assistant_id}/graph',
        '/langgraph/assistants/{assistant_id}/schemas',
        '/langgraph/assistants/{assistant_id}/subgraphs',
        '/langgraph/info',
        '/langgraph/ok',
        '/langgraph/runs/stream',
        '/langgraph/runs/wait',
        '/langgraph/threads',
        '/langgraph/threads/count',
        '/langgraph/threads/search',
        '/langgraph/threads/{thread_id}',
        '/langgraph/threads/{thread_id}/history',
        '/langgraph/threads/{thread_id}/runs',
        '/langgraph/threads/{thread_id}/runs/stream',
        '/langgraph/threads/{thread_id}/runs/wait',
        '/langgraph/threads/{thread_id}/runs/{run_id}',
        '/langgraph/threads/{thread_id}/runs/{run_id}/cancel',
        '/langgraph/threads/{thread_id}/runs/{run_id}/join',
        '/langgraph/threads/{thread_id}/runs/{run_id}/stream',
        '/langgraph/threads/{thread_id}/state',
        '/langgraph/threads/{thread_id}/state/checkpoint',
        '/langgraph/threads/{thread_id}/state/{checkpoint_id}',
        '/metrics',
      ].sort(),
    );
    expect(doc.paths['/api/chat'].post.requestBody.content['application/json'].schema.$ref).toMatch(/ChatRequest/);
    expect(doc.paths['/api/chat'].post.responses['200'].content['application/json'].schema.$ref).toMatch(/ChatResponse/);
    expect(Object.keys(doc.paths['/api/chat/stream'].post.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(doc.paths['/api/knowledge/documents'].post.requestBody.content)).toEqual(['multipart/form-data']);
    expect(doc.paths['/api/knowledge/search'].post.responses['200'].content['application/json'].schema.$ref).toMatch(/KnowledgeSearchResponse/);
    expect(schemas.ChatResponse.properties.rag_trace.allOf?.[0]?.$ref ?? schemas.ChatResponse.properties.rag_trace.$ref).toMatch(/RagTrace/);
    expect(doc.paths['/api/sessions'].get.responses['200'].content['application/json'].schema.$ref).toMatch(/SessionListResponse/);
    expect(doc.paths['/api/sessions'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.$ref).toMatch(/ChatCompletionRequestDoc/);
    expect(doc.paths['/v1/chat/completions'].post.security).toEqual([{ bearer: [] }]);
  });

  it('names the data of every SSE event and references them from both stream routes', async () => {
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    const schemas = doc.components.schemas;
    for (const route of [doc.paths['/api/chat/stream'].post, doc.paths['/api/chat/runs/{run_id}/stream'].get]) {
      const events = route.responses['200'].content['text/event-stream'].schema.oneOf;
      const dataByEvent = Object.fromEntries(
        events.map((shape: { required: string[]; properties: { event: { enum: string[] }; data: { $ref: string } } }) => {
          expect(shape.required).toEqual(['id', 'event', 'data']);
          return [shape.properties.event.enum[0], shape.properties.data.$ref];
        }),
      );
      expect(dataByEvent).toEqual({
        metadata: '#/components/schemas/MetadataEvent',
        step: '#/components/schemas/StepEvent',
        token: '#/components/schemas/TokenEvent',
        tool: '#/components/schemas/ToolEvent',
        hitl: '#/components/schemas/HitlEvent',
        trace: '#/components/schemas/TraceEvent',
        done: '#/components/schemas/DoneEvent',
        error: '#/components/schemas/ErrorEvent',
      });
    }
    expect(schemas.MetadataEvent.required.sort()).toEqual(['run_id', 'session_id']);
    expect(schemas.StepEvent.required.sort()).toEqual(['elapsed_ms', 'label', 'stage', 'total_ms']);
    expect(Object.keys(schemas.StepEvent.properties)).toEqual(
      expect.arrayContaining(['recall_k', 'candidates', 'model', 'count', 'route', 'confidence', 'mode', 'complexity', 'index', 'merged', 'round']),
    );
    expect(schemas.TokenEvent.required).toEqual(['text']);
    expect(schemas.ToolEvent.properties.summary.allOf?.[0]?.$ref ?? schemas.ToolEvent.properties.summary.$ref).toMatch(/ToolSummary$/);
    expect(Object.keys(schemas.ToolSummary.properties).sort()).toEqual(['args', 'code', 'failed', 'output', 'truncated']);
    expect(Object.keys(schemas.HitlEvent.properties)).toEqual(Object.keys(schemas.PendingHitlState.properties));
    expect(Object.keys(schemas.TraceEvent.properties)).toEqual(Object.keys(schemas.RagTrace.properties));
    expect(schemas.DoneEvent.required.sort()).toEqual(['response', 'session_id']);
    expect(schemas.ErrorEvent.properties.code.allOf?.[0]?.$ref ?? schemas.ErrorEvent.properties.code.$ref).toBe('#/components/schemas/ErrorCode');
    expect(schemas.ErrorCode.enum.sort()).toEqual(Object.keys(ERROR_CODE_STATUS).sort());
    expect(schemas.ErrorEvent.properties.message_saved).toMatchObject({ type: 'boolean', nullable: true });
  });

  it('lists exactly the statuses each route can answer, every one described, errors as JSON', async () => {
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(statuses('/api/chat/runs/{run_id}/stream', 'get')).toEqual(['200', '400', '401', '404', '410', '503']);
    expect(statuses('/api/chat/stream', 'post')).toEqual(['200', '400', '401', '404', '409', '413', '429', '503']);
    expect(statuses('/api/chat', 'post')).toEqual(['200', '400', '401', '404', '409', '413', '429', '502', '503', '504']);
    expect(statuses('/api/chat/runs/{run_id}/cancel', 'post')).toEqual(['200', '400', '401', '404', '413', '429', '503']);
    expect(statuses('/api/sessions', 'get')).toEqual(['200', '400', '401', '503']);
    expect(statuses('/api/knowledge/documents', 'post')).toEqual(['200', '201', '202', '400', '401', '403', '409', '413', '415', '422', '429', '503']);
    expect(statuses('/api/knowledge/jobs/{id}', 'get')).toEqual(['200', '400', '401', '403', '404', '503']);
    const undescribed: string[] = [];
    const nonJsonErrors: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, { description?: string; content?: object }> }>>(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const route = `${method.toUpperCase()} ${path} ${status}`;
          if (!response.description?.trim() || response.description === 'Error') undescribed.push(route);
          if (Number(status) >= 400 && Object.keys(response.content ?? {}).join() !== 'application/json') nonJsonErrors.push(route);
        }
      }
    }
    expect(undescribed).toEqual([]);
    expect(nonJsonErrors).toEqual([]);
  });

  it('offers chat request examples that anyone can execute as they are (no fixed session_id)', async () => {
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    for (const path of ['/api/chat', '/api/chat/stream']) {
      const body = doc.paths[path].post.requestBody.content['application/json'];
      const examples = Object.values<{ value: Record<string, unknown> }>(body.examples ?? {});
      expect(examples.length).toBeGreaterThan(0);
      for (const example of examples) expect(Object.keys(example.value)).toEqual(['message']);
    }
    expect(doc.components.schemas.ChatRequest.properties.session_id.example).toBeUndefined();
  });
});
