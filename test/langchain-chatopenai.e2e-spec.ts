import { ChatOpenAI } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { randomUUID } from 'node:crypto';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** What the service adds to a completion, as ChatOpenAI hands back its raw response. */
interface RawCompletion {
  rag_trace?: { tool_used?: boolean; final_chunks?: Array<{ source: string }> } | null;
  pending_hitl?: { clarification_prompt: string; options: string[] } | null;
  session_id?: string;
}
const rawOf = (message: { additional_kwargs: Record<string, unknown> }) => message.additional_kwargs.__raw_response as RawCompletion | undefined;

/** LangChain JS's ChatOpenAI pointed at this service's /v1, as docs/client-protocols.md shows it. */
describe('LangChain ChatOpenAI (@langchain/openai) at /v1', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp();
    base = await t.listen();
  });
  afterAll(() => t.close());

  const chat = (user: string, options: { raw?: boolean; headers?: Record<string, string> } = {}) =>
    new ChatOpenAI({
      model: 'rag-agent',
      apiKey: t.auth(user).Authorization.replace(/^Bearer /, ''),
      configuration: { baseURL: `${base}/v1`, defaultHeaders: options.headers },
      maxRetries: 0,
      ...(options.raw ? { __includeRawResponse: true } : {}),
    });

  it('answers, and keeps no trace by default', async () => {
    const answer = await chat(uniqueUser('lc')).invoke('How long is the Aurora X2 warranty?');
    expect(answer.content).toMatch(/three-year/);
    expect(rawOf(answer)).toBeUndefined();
    expect(JSON.stringify(answer)).not.toContain('rag_trace');
  });

  it('hands back the RAG trace with __includeRawResponse, whole and streamed (on the chunk with the finish reason)', async () => {
    const model = chat(uniqueUser('lc'), { raw: true });
    const answer = await model.invoke('How long is the Aurora X2 warranty?');
    const trace = rawOf(answer)?.rag_trace;
    expect(trace?.tool_used).toBe(true);
    expect(trace?.final_chunks?.map((chunk) => chunk.source)).toContain('aurora-x2-mesh-manual.md');

    let text = '';
    let streamed: RawCompletion['rag_trace'];
    for await (const chunk of await model.stream('How long is the Aurora X2 warranty?')) {
      text += typeof chunk.content === 'string' ? chunk.content : '';
      streamed = rawOf(chunk as AIMessageChunk)?.rag_trace ?? streamed;
    }
    expect(text).toBe(answer.content);
    expect(streamed?.final_chunks).toEqual(trace?.final_chunks);
  });

  it("gives a session turn's session id and a paused turn's question in the raw response", async () => {
    const session = randomUUID();
    const answer = await chat(uniqueUser('lc'), { raw: true, headers: { 'X-Session-Id': session } }).invoke('How long is the Aurora warranty?');
    const raw = rawOf(answer);
    expect(raw?.session_id).toBe(session);
    expect(raw?.pending_hitl?.options.length).toBeGreaterThan(1);
    expect(String(answer.content).startsWith(raw!.pending_hitl!.clarification_prompt)).toBe(true);
  });
});
