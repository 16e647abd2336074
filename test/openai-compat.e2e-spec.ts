import OpenAI, { APIError, AuthenticationError, BadRequestError, ConflictError, NotFoundError, RateLimitError } from 'openai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { countTokens } from 'gpt-tokenizer';
import { AgentFactory } from '../src/agent/agent.factory.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeOpenAIServer } from './support/fake-openai-server.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';

/** The fields this service adds to a completion (clients that ignore unknown fields never see them). */
type WithRag<T> = T & { rag_trace?: Record<string, unknown> | null; pending_hitl?: Record<string, unknown> | null; session_id?: string };

function bearer(header: { Authorization: string }): string {
  return header.Authorization.replace(/^Bearer /, '');
}

describe('OpenAI-compatible API through the openai package (local model)', () => {
  let t: TestApp;
  let base: string;
  const weather = new FakeWeatherServer();
  const client = (user: string, options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
    new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(user)), maxRetries: 0, ...options });

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url });
    base = await t.listen();
  });
  afterAll(async () => {
    await t.close();
    await weather.stop();
  });

  it('lists the agent as its one model, and answers 404 model_not_found for any other', async () => {
    const openai = client(uniqueUser('oa'));
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models).toEqual([expect.objectContaining({ id: 'rag-agent', object: 'model', owned_by: 'agentic-rag-chat' })]);
    expect(await openai.models.retrieve('rag-agent')).toMatchObject({ id: 'rag-agent', object: 'model' });
    const missing = await openai.models.retrieve('gpt-4o').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
    const wrongModel = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }).catch((error: unknown) => error);
    expect(wrongModel).toBeInstanceOf(NotFoundError);
    expect(wrongModel).toMatchObject({ code: 'model_not_found' });
  });

  it("takes an API key of this service as the OpenAI API key, with its owner's identity; a revoked key is refused", async () => {
    const user = uniqueUser('oa-key');
    const created = await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(user)).send({ name: 'open-webui' }).expect(201);
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: created.body.key, maxRetries: 0 });
    const session = randomUUID();
    await openai.chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'Hello' }] }, { headers: { 'X-Session-Id': session } });
    const owned = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(owned.body.messages).toHaveLength(2);
    await request(t.app.getHttpServer()).delete(`/api/keys/${created.body.id}`).set(t.auth(user)).expect(200);
    const refused = await openai.models.list().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthenticationError);
  });

  it('answers a stateless question whole, with its RAG trace and estimated usage, and stores nothing', async () => {
    const user = uniqueUser('oa');
    const [{ n: checkpointsBefore }] = await t.dataSource.query('SELECT count(*)::int AS n FROM checkpoints');
    const completion = (await client(user).chat.completions.create({
      model: 'rag-agent',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'How long is the Aurora X2 warranty?' },
      ],
    })) as WithRag<OpenAI.Chat.Completions.ChatCompletion>;
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('rag-agent');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0].message.role).toBe('assistant');
    expect(completion.choices[0].message.content).toMatch(/three-year/);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.rag_trace).toMatchObject({ tool_used: true });
    expect(completion.pending_hitl).toBeNull();
    expect(completion.session_id).toBeUndefined();
    expect(completion.usage).toMatchObject({ estimated: true });
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(10);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(3);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(sessions.body.sessions).toEqual([]);
    // Its checkpoints lived in memory, only while it ran.
    expect(t.app.get(AgentFactory).ephemeralSaver.storedThreads).toBe(0);
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM checkpoints');
    expect(n).toBe(checkpointsBefore);
  });

  it('streams the same answer as chat.completion.chunk deltas, the trace on the final chunk and usage when asked', async () => {
    const user = uniqueUser('oa');
    const messages = [{ role: 'user' as const, content: 'How long is the Aurora X2 warranty?' }];
    const whole = await client(user).chat.completions.create({ model: 'rag-agent', messages });
    const stream = await client(user).chat.completions.create({ model: 'rag-agent', messages, stream: true, stream_options: { include_usage: true } });
    const chunks: Array<WithRag<OpenAI.Chat.Completions.ChatCompletionChunk>> = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0].message.content);
    expect(chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? '') !== '').length).toBeGreaterThan(3);
    const final = chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(final?.choices[0].finish_reason).toBe('stop');
    expect(final?.rag_trace).toMatchObject({ tool_used: true });
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ estimated: true, total_tokens: expect.any(Number) });
  });

  it('continues a stored session given by X-Session-Id or metadata.session_id, using only the last user message', async () => {
    const user = uniqueUser('oa');
    const session = randomUUID();
    const openai = client(user, { defaultHeaders: { 'X-Session-Id': session } });
    const first = (await openai.chat.completions.create({
      model: 'rag-agent',
      messages: [{ role: 'user', content: 'How long is the Aurora X2 warranty?' }],
    })) as WithRag<OpenAI.Chat.Completions.ChatCompletion>;
    expect(first.session_id).toBe(session);
    // The earlier messages a client resends are the session's already: only the last one is the turn.
    const second = await client(user).chat.completions.create({
      model: 'rag-agent',
      messages: [
        { role: 'user', content: 'ignored: the session holds the history' },
        { role: 'assistant', content: 'ignored too' },
        { role: 'user', content: 'Hello' },
      ],
      metadata: { session_id: session },
      stream: true,
    });
    let text = '';
    for await (const chunk of second) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toMatch(/^Hello!/);
    const stored = await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200);
    expect(stored.body.messages.map((m: { type: string; content: string }) => [m.type, m.content.slice(0, 5)])).toEqual([
      ['human', 'How l'],
      ['ai', first.choices[0].message.content!.slice(0, 5)],
      ['human', 'Hello'],
      ['ai', text.slice(0, 5)],
    ]);
    // Another user's session is not found, whoever names it.
    const stranger = await client(uniqueUser('oa'), { defaultHeaders: { 'X-Session-Id': session } })
      .chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'Hello' }] })
      .catch((error: unknown) => error);
    expect(stranger).toBeInstanceOf(NotFoundError);
    expect(stranger).toMatchObject({ code: 'session_not_found' });
  });

  it('answers a paused turn with its question and options, and resumes it with the choice in the same session', async () => {
    const user = uniqueUser('oa');
    const session = randomUUID();
    const openai = client(user, { defaultHeaders: { 'X-Session-Id': session } });
    const paused = (await openai.chat.completions.create({
      model: 'rag-agent',
      messages: [{ role: 'user', content: 'How long is the Aurora warranty?' }],
    })) as WithRag<OpenAI.Chat.Completions.ChatCompletion>;
    expect(paused.pending_hitl).toMatchObject({ hitl_type: 'choose', options: expect.arrayContaining(['Aurora X2 Mesh System — User Manual']) });
    const content = paused.choices[0].message.content!;
    expect(content.startsWith(String(paused.pending_hitl!.clarification_prompt))).toBe(true);
    for (const option of paused.pending_hitl!.options as string[]) expect(content).toContain(option);
    // Streamed, the resumed turn answers from the chosen manual.
    const resumed = await openai.chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'X2' }], stream: true });
    let text = '';
    let final: WithRag<OpenAI.Chat.Completions.ChatCompletionChunk> | undefined;
    for await (const chunk of resumed) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) final = chunk;
    }
    expect(text).toMatch(/three-year/);
    expect(final?.pending_hitl).toBeNull();
    expect((final?.rag_trace?.hitl_chunks as Array<{ source: string }>)[0].source).toBe('aurora-x2-mesh-manual.md');
  });

  it("streams a paused stateless turn's question as content, marked pending_hitl", async () => {
    const stream = await client(uniqueUser('oa')).chat.completions.create({
      model: 'rag-agent',
      messages: [{ role: 'user', content: 'How long is the Aurora warranty?' }],
      stream: true,
    });
    let text = '';
    let final: WithRag<OpenAI.Chat.Completions.ChatCompletionChunk> | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) final = chunk;
    }
    expect(final?.pending_hitl).toMatchObject({ hitl_type: 'choose' });
    expect(text).toContain('Aurora X1 Router — User Manual');
  });

  it('passes max_tokens and stop to the model (the local model honours both)', async () => {
    const openai = client(uniqueUser('oa'));
    const messages = [{ role: 'user' as const, content: 'How long is the Aurora X2 warranty?' }];
    const full = (await openai.chat.completions.create({ model: 'rag-agent', messages })).choices[0].message.content!;
    const short = await openai.chat.completions.create({ model: 'rag-agent', messages, max_tokens: 3 });
    expect(short.choices[0].finish_reason).toBe('length');
    // The limit is per model call (as OpenAI's): the answer is cut to 3 tokens, the tool call before it is not.
    expect(countTokens(short.choices[0].message.content!)).toBeLessThanOrEqual(3);
    expect(short.choices[0].message.content!.length).toBeGreaterThan(0);
    expect(full.startsWith(short.choices[0].message.content!)).toBe(true);
    const word = full.split(/\s+/)[3];
    const stopped = await openai.chat.completions.create({ model: 'rag-agent', messages, stop: [word] });
    expect(stopped.choices[0].message.content).toBe(full.slice(0, full.indexOf(word)));
  });

  it('refuses what the agent cannot honour with a 400 naming the parameter', async () => {
    const openai = client(uniqueUser('oa'));
    const user = { role: 'user' as const, content: 'Hello' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }, 'tools'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ seed: 7 }, 'seed'],
      [{ temperature: 3 }, 'temperature'],
      [{ max_tokens: 0 }, 'max_tokens'],
      [{ messages: [] }, 'messages'],
      [{ messages: [user, { role: 'assistant', content: 'Hi' }] }, 'messages[1].role'],
      [{ messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }, user] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] }] }, 'messages[0].content[0].type'],
      [{ messages: [{ role: 'user', content: 'nul \u0000 inside' }] }, 'messages[0].content'],
      [{ messages: [{ role: 'user', content: 'lone \ud800 surrogate' }] }, 'messages[0].content'],
      [{ messages: [{ role: 'user', content: '\u200b\u200b' }] }, 'messages[0].content'],
      [{ metadata: { session_id: 'not-a-uuid' } }, 'metadata.session_id'],
    ];
    for (const [overrides, param] of cases) {
      const error = await openai.chat.completions
        .create({ model: 'rag-agent', messages: [user], ...overrides } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming)
        .catch((caught: unknown) => caught);
      expect([param, error]).toEqual([param, expect.any(BadRequestError)]);
      expect([param, (error as APIError).param, (error as APIError).type]).toEqual([param, param, 'invalid_request_error']);
    }
    const badHeader = await client(uniqueUser('oa'), { defaultHeaders: { 'X-Session-Id': 'x'.repeat(100) } })
      .chat.completions.create({ model: 'rag-agent', messages: [user] })
      .catch((caught: unknown) => caught);
    expect(badHeader).toMatchObject({ status: 400, param: 'X-Session-Id' });
  });

  it('answers auth failures, malformed bodies and oversized bodies in the OpenAI error shape', async () => {
    const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-a-token', maxRetries: 0 });
    const refused = await bad.models.list().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect(refused).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    const malformed = await request(t.app.getHttpServer())
      .post('/v1/chat/completions')
      .set(t.auth(uniqueUser('oa')))
      .set('Content-Type', 'application/json')
      .send('{"model": "rag-agent", "messages": [')
      .expect(400);
    expect(malformed.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'malformed_json' } });
    const huge = await request(t.app.getHttpServer())
      .post('/v1/chat/completions')
      .set(t.auth(uniqueUser('oa')))
      .send({ model: 'rag-agent', messages: [{ role: 'user', content: 'x'.repeat(2_000_000) }] })
      .expect(413);
    expect(huge.body.error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error' });
    const notObject = await request(t.app.getHttpServer())
      .post('/v1/chat/completions')
      .set(t.auth(uniqueUser('oa')))
      .send([1, 2])
      .expect(400);
    expect(notObject.body.error).toMatchObject({ param: 'body' });
  });

  it('answers a body that is not JSON (text/plain, a form, multipart) with 415 in the OpenAI error shape', async () => {
    const body = JSON.stringify({ model: 'rag-agent', messages: [{ role: 'user', content: 'hello' }] });
    for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      const res = await request(t.app.getHttpServer())
        .post('/v1/chat/completions')
        .set(t.auth(uniqueUser('oa')))
        .set('Content-Type', contentType)
        .send(body);
      expect({ contentType, status: res.status, body: res.body }).toEqual({
        contentType,
        status: 415,
        body: {
          error: {
            message: `The request body must be JSON: send it with Content-Type: application/json (not ${contentType.split(';')[0]})`,
            type: 'invalid_request_error',
            param: null,
            code: 'unsupported_media_type',
          },
        },
      });
    }
    // JSON with its charset named is read as before.
    await request(t.app.getHttpServer())
      .post('/v1/chat/completions')
      .set(t.auth(uniqueUser('oa')))
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(body)
      .expect(200);
    // The OpenAPI document names the code the 415 carries.
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    expect(doc.paths['/v1/chat/completions'].post.responses['415'].description).toContain('`unsupported_media_type`');
  });

  it('answers 409 run_in_progress while the session has a run', async () => {
    const user = uniqueUser('oa');
    const held = await heldWeatherTurn(base, t.auth(user), weather);
    try {
      const busy = await client(user, { defaultHeaders: { 'X-Session-Id': held.sessionId } })
        .chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'Hello' }] })
        .catch((error: unknown) => error);
      expect(busy).toBeInstanceOf(ConflictError);
      expect(busy).toMatchObject({ status: 409, code: 'run_in_progress' });
    } finally {
      weather.release();
      await held.stream.waitFor((event) => event.event === 'done');
    }
  });
});

describe('OpenAI-compatible API: rate limits', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '1' });
    base = await t.listen();
  });
  afterAll(() => t.close());

  it('answers a turn beyond the budget 429 with Retry-After, which the openai package raises as RateLimitError', async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(uniqueUser('oa-rl'))), maxRetries: 0 });
    await openai.chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'Hello' }] });
    const limited = await openai.chat.completions.create({ model: 'rag-agent', messages: [{ role: 'user', content: 'Hello' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests' });
    expect(Number((limited as RateLimitError).headers?.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('OpenAI-compatible API over an OpenAI-compatible model', () => {
  const llm = new FakeOpenAIServer();
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    await llm.start();
    // One model for every role, as without LLM_FAST_MODEL.
    t = await createTestApp(llm.appEnv({ LLM_FAST_MODEL: 'main-model', LLM_TIMEOUT_MS: '3000', OPENAI_COMPAT_MODEL: 'team-agent' }));
    base = await t.listen();
  });
  afterEach(() => llm.reset());
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });

  it('passes temperature, top_p, max_tokens and stop to the model, and reports the usage the model counted', async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(uniqueUser('oa-llm'))), maxRetries: 0 });
    llm.play({ content: 'Hello from the model.', usage: { prompt_tokens: 42, completion_tokens: 5 } });
    const completion = await openai.chat.completions.create({
      model: 'team-agent',
      messages: [{ role: 'user', content: 'Say hello' }],
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 50,
      stop: ['END'],
    });
    expect(completion.choices[0].message.content).toBe('Hello from the model.');
    expect(completion.usage).toEqual({ prompt_tokens: 42, completion_tokens: 5, total_tokens: 47 });
    const sent = llm.requests.find((r) => r.forcedFunction === null)!;
    expect(sent.body).toMatchObject({ model: 'main-model', temperature: 0.7, top_p: 0.9, max_tokens: 50, stop: ['END'] });

    // Without sampling the agent keeps its own settings (temperature 0, no limit).
    llm.play({ content: 'Plain.', usage: { prompt_tokens: 10, completion_tokens: 1 } });
    await openai.chat.completions.create({ model: 'team-agent', messages: [{ role: 'user', content: 'Say hello' }] });
    const plain = llm.requests.filter((r) => r.forcedFunction === null).at(-1)!;
    expect(plain.body.temperature).toBe(0);
    expect(plain.body).not.toHaveProperty('max_tokens');
  });

  it('streams usage the model counted, and a model failure mid-stream as an error the openai package raises', async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(uniqueUser('oa-llm'))), maxRetries: 0 });
    llm.play({ content: 'Streamed words here.', usage: { prompt_tokens: 30, completion_tokens: 4 } });
    const stream = await openai.chat.completions.create({
      model: 'team-agent',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Streamed words here.');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 });

    llm.play({ status: 500, error: 'upstream exploded: secret internals' });
    const failing = await openai.chat.completions.create({ model: 'team-agent', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    const failure = await (async () => {
      for await (const _chunk of failing) {
        // drain until the error event
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect(String((failure as APIError).message)).not.toMatch(/secret internals/);
    // Without a session nothing is stored: the error says so, as the service's own protocols do.
    expect((failure as APIError).error).toMatchObject({ code: 'model_error', type: 'server_error', message_saved: false });
  });

  it('tells whether a failed session turn kept the message (message_saved), sync and streamed', async () => {
    const user = uniqueUser('oa-saved');
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(user)), maxRetries: 0, defaultHeaders: { 'X-Session-Id': randomUUID() } });
    llm.play({ status: 500, error: 'upstream exploded' });
    const sync = await openai.chat.completions.create({ model: 'team-agent', messages: [{ role: 'user', content: 'Say hello' }] }).catch((e: unknown) => e);
    expect(sync).toBeInstanceOf(APIError);
    expect((sync as APIError).error).toMatchObject({ code: 'model_error', message_saved: true });

    llm.play({ status: 500, error: 'upstream exploded' });
    const failing = await openai.chat.completions.create({ model: 'team-agent', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    const streamed = await (async () => {
      for await (const _chunk of failing) {
        // drain until the error event
      }
    })().catch((error: unknown) => error);
    expect((streamed as APIError).error).toMatchObject({ code: 'model_error', message_saved: true });
  });
});
