import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * Chat messages longer than the knowledge tool takes whole (up to the 8 000
 * characters a message may have): the tool shortens the query at a sentence
 * or word boundary, answers, and says so in the trace.
 */
describe('Long chat messages and the knowledge tool', () => {
  let t: TestApp;
  const post = (user: string, body: object) => request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send(body);

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers an English question followed by 5 000 characters of filler, with a trace saying the query was shortened', async () => {
    const question = 'How do I reset the Aurora X1 router to factory settings?';
    const filler = Array.from({ length: 140 }, (_, i) => `Background note ${i + 1}: this paragraph is context only`).join('. ');
    const message = `${question} ${filler}.`;
    expect(message.length).toBeGreaterThan(5000);
    expect(message.length).toBeLessThanOrEqual(8000);
    const res = await post(uniqueUser('long'), { message }).expect(200);
    expect(res.body.response).not.toMatch(/did not match expected schema|Too big/);
    expect(res.body.response).toMatch(/hold the reset button on the back for 10 seconds/);
    expect(res.body.response).toContain('[aurora-x1-router-manual.md]');
    const trace = res.body.rag_trace;
    expect(trace).toMatchObject({ tool_used: true, tool_name: 'knowledge_search', query_truncated: true, query_original_length: message.length });
    // The query sent to retrieval is the start of the message, cut at a sentence end, and bounded.
    expect(trace.query.length).toBeLessThanOrEqual(1000);
    expect(message.startsWith(trace.query)).toBe(true);
    expect(trace.query).toMatch(/^How do I reset the Aurora X1 router to factory settings\? .*\.$/);
    expect(trace.final_chunks[0].source).toBe('aurora-x1-router-manual.md');
  });

  it('answers a Chinese question followed by filler, cut at a Chinese sentence end', async () => {
    const question = '积分的有效期是多久？';
    const filler = Array.from({ length: 300 }, (_, i) => `这是第${i + 1}段背景说明，仅供参考`).join('。');
    const message = `${question}${filler}。`;
    expect(message.length).toBeGreaterThan(2000);
    expect(message.length).toBeLessThanOrEqual(8000);
    const res = await post(uniqueUser('long-zh'), { message }).expect(200);
    expect(res.body.response).toMatch(/12 个月/);
    expect(res.body.response).toContain('[会员积分规则.md]');
    const trace = res.body.rag_trace;
    expect(trace).toMatchObject({ query_truncated: true, query_original_length: message.length });
    expect(trace.query.length).toBeLessThanOrEqual(1000);
    expect(message.startsWith(trace.query)).toBe(true);
    expect(trace.query).toMatch(/^积分的有效期是多久？.*。$/);
  });

  it('leaves a short question whole and says it was not shortened; the OpenAPI trace schema has the fields', async () => {
    const message = 'How do I reset the Aurora X1 router to factory settings?';
    const res = await post(uniqueUser('short'), { message }).expect(200);
    expect(res.body.rag_trace).toMatchObject({ query: message, query_truncated: false, query_original_length: message.length });
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    expect(doc.components.schemas.RagTrace.properties).toMatchObject({
      query_truncated: { type: 'boolean' },
      query_original_length: { type: 'integer' },
      full_text_terms: { type: 'integer' },
      full_text_terms_dropped: { type: 'integer' },
    });
  });
});
