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

  const provider = (user: string, headers: Record<string, string> = {}) =>
    createOpenAICompatible({
      name: 'rag',
      baseURL: `${base}/v1`,
      apiKey: t.auth(user).Authorization.replace(/^Bearer /, ''),
      headers,
      includeUsage: true,
    });

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

  it("raises the service's 404 model_not_found as the SDK's API call error", async () => {
    const failure = await generateText({ model: provider(uniqueUser('aisdk'))('gpt-4o'), prompt: 'Hello', maxRetries: 0 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ statusCode: 404 });
    expect(String((failure as Error).message)).toMatch(/gpt-4o/);
  });
});
