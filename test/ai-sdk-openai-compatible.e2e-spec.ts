import { ragMetadataExtractor, type RagProviderMetadata } from '@agentic-rag/client';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** The AI SDK's OpenAI-compatible provider pointed at this service's /v1, as a team would configure it. */
describe('the AI SDK (streamText, generateText) over @ai-sdk/openai-compatible at /v1', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp();
    base = await t.listen();
  });
  afterAll(() => t.close());

  const provider = (user: string, headers: Record<string, string> = {}, withTrace = false) =>
    createOpenAICompatible({
      name: 'rag',
      baseURL: `${base}/v1`,
      apiKey: t.auth(user).Authorization.replace(/^Bearer /, ''),
      headers,
      includeUsage: true,
      ...(withTrace ? { metadataExtractor: ragMetadataExtractor('rag') } : {}),
    });
  const ragOf = (metadata: unknown) => (metadata as { rag: RagProviderMetadata } | undefined)?.rag;
  const sourcesOf = (rag: RagProviderMetadata | undefined) => rag?.rag_trace?.final_chunks?.map((chunk) => chunk.source);

  it('streams an answer from the knowledge base, with usage, and stores nothing without a session', async () => {
    const user = uniqueUser('aisdk');
    const result = streamText({ model: provider(user)('rag-agent'), prompt: 'How long is the Aurora X2 warranty?' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toMatch(/three-year/);
    expect(await result.finishReason).toBe('stop');
    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(10);
    expect(usage.outputTokens).toBeGreaterThan(3);
    const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(sessions.body.sessions).toEqual([]);
  });

  it('keeps the turns in a session named by X-Session-Id', async () => {
    const user = uniqueUser('aisdk');
    const session = randomUUID();
    const model = provider(user, { 'X-Session-Id': session })('rag-agent');
    const first = await generateText({ model, prompt: 'How long is the Aurora X2 warranty?' });
    expect(first.text).toMatch(/three-year/);
    const second = streamText({ model, prompt: 'Thanks!' });
    let text = '';
    for await (const delta of second.textStream) text += delta;
    expect(text).toMatch(/welcome/i);
    const stored = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(stored.body.messages.map((m: { type: string }) => m.type)).toEqual(['human', 'ai', 'human', 'ai']);
  });

  it('drops the RAG trace from providerMetadata without an extractor', async () => {
    const answer = await generateText({ model: provider(uniqueUser('aisdk'))('rag-agent'), prompt: 'How long is the Aurora X2 warranty?' });
    expect(answer.text).toMatch(/three-year/);
    expect(answer.providerMetadata).toEqual({ rag: {} });
  });

  it("puts the turn's RAG trace in providerMetadata.rag with the client's ragMetadataExtractor, whole and streamed", async () => {
    const model = provider(uniqueUser('aisdk'), {}, true)('rag-agent');
    const whole = await generateText({ model, prompt: 'How long is the Aurora X2 warranty?' });
    const rag = ragOf(whole.providerMetadata);
    expect(rag).toMatchObject({ pending_hitl: null, session_id: null, rag_trace: { tool_used: true, tool_name: 'knowledge_search' } });
    expect(sourcesOf(rag)).toContain('aurora-x2-mesh-manual.md');

    const streamed = streamText({ model, prompt: 'How long is the Aurora X2 warranty?' });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(whole.text);
    const streamedRag = ragOf(await streamed.providerMetadata);
    expect(streamedRag?.rag_trace?.tool_used).toBe(true);
    expect(streamedRag?.rag_trace?.final_chunks).toEqual(rag?.rag_trace?.final_chunks);
  });

  it("gives a session turn's session id and a paused turn's question in providerMetadata.rag", async () => {
    const session = randomUUID();
    const model = provider(uniqueUser('aisdk'), { 'X-Session-Id': session }, true)('rag-agent');
    const paused = await generateText({ model, prompt: 'How long is the Aurora warranty?' });
    const rag = ragOf(paused.providerMetadata);
    expect(rag?.session_id).toBe(session);
    expect(rag?.pending_hitl).toMatchObject({ hitl_type: 'choose', options: expect.any(Array) });
    expect(paused.text.startsWith(String(rag?.pending_hitl?.clarification_prompt))).toBe(true);
  });

  it("raises the service's 404 model_not_found as the SDK's API call error", async () => {
    const failure = await generateText({ model: provider(uniqueUser('aisdk'))('gpt-4o'), prompt: 'Hello', maxRetries: 0 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ statusCode: 404 });
    expect(String((failure as Error).message)).toMatch(/gpt-4o/);
  });
});
