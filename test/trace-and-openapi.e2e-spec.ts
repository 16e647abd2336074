import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { createClient } from '@keyv/redis';
import { messagesCacheKey } from '../src/session/conversation-storage.service.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_REDIS_URL } from './support/test-env.js';

/** The field list of protocol.md ("Trace"), written out here as the test's own oracle. */
const PROTOCOL_TRACE_FIELDS = [
  'tool_used', 'tool_name', 'query', 'retrieval_stage',
  'complexity', 'complexity_reason', 'sub_questions', 'sub_agent_count', 'merged_evidence_count',
  'retrieval_mode', 'pipeline_id', 'recall_k', 'recall_k_source', 'recall_k_config_error', 'recall_multiplier',
  'top_k', 'recalled_count', 'initial_chunk_level',
  'auto_merge_enabled', 'auto_merge_applied', 'auto_merge_threshold', 'auto_merge_replaced_count',
  'auto_merge_level', 'candidates_after_merge',
  'rerank_enabled', 'rerank_applied', 'rerank_model', 'rerank_endpoint', 'rerank_error', 'rerank_timeout_ms',
  'min_relevance', 'rerank_input_count', 'rerank_output_count', 'after_threshold_count', 'final_empty',
  'initial_chunks',
  'grade_route', 'evidence_status', 'evidence_relevance', 'evidence_answerability', 'evidence_ambiguity',
  'grade_confidence', 'grade_reason',
  'rewrite_mode', 'rewritten_query', 'step_back_question', 'hypothetical_doc', 'rewrite_chunks',
  'final_chunks',
  'missing_conditions', 'clarification_prompt', 'clarification_options', 'hitl_resumed', 'user_supplement',
  'hitl_resume_strategy', 'pre_resume_snapshot', 'hitl_chunks',
  'timings',
];

const MESSY_TRACE = {
  tool_used: true,
  query: '保修政策',
  internal_debug: { prompt: 'should never leave the server' },
  grade_confidence: 7,
  evidence_ambiguity: 'something-new',
  final_chunks: [
    { source: 'warranty.md', page: 2, text: '两年保修', score: 0.91, embedding: [0.1, 0.2] },
    { text: 'chunk without a source' },
  ],
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
    await t.dataSource.query(
      `INSERT INTO chat_messages (session_id, seq, type, content, rag_trace) VALUES ($1, 2, 'ai', 'a', $2::jsonb)`,
      [session, JSON.stringify(MESSY_TRACE)],
    );
    const res = await request(t.app.getHttpServer())
      .get(`/api/sessions/${session}/messages`)
      .set(t.auth(user))
      .expect(200);
    expect(res.body.messages[1].rag_trace).toEqual(NORMALIZED);
  });

  it('normalizes messy traces found in the cache as well (seed F17)', async () => {
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
    const res = await request(t.app.getHttpServer())
      .get(`/api/sessions/${session}/messages`)
      .set(t.auth(user))
      .expect(200);
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
      ['chunk_id', 'page', 'rerank_score', 'rrf_rank', 'score', 'source', 'text'].sort(),
    );
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
        '/api/knowledge/documents',
        '/api/knowledge/documents/{id}',
        '/api/knowledge/search',
        '/api/sessions',
        '/api/sessions/{session_id}',
        '/api/sessions/{session_id}/messages',
        '/api/sessions/{session_id}/messages/{message_id}/feedback',
        '/health',
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
  });
});
