import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, type UIMessageChunk } from 'ai';
import request from 'supertest';
import type { RagUIMessage } from '../src/protocols/ai-sdk/ui-message-mapping.js';
import { UiSessionIds } from '../src/protocols/ai-sdk/ui-session-id.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';
import { heldWeatherTurn } from './support/held-turn.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** `POST /api/chat/ui` and its reconnect route, driven by the AI SDK's own transport and stream reader. */
describe('AI SDK UI message stream (useChat)', () => {
  const weather = new FakeWeatherServer();
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '0' });
    base = await t.listen();
  }, 60_000);
  afterAll(async () => {
    weather.release();
    await t?.close();
    await weather.stop();
  });

  const transport = (user?: string, extra: Partial<ConstructorParameters<typeof DefaultChatTransport<RagUIMessage>>[0]> = {}) =>
    new DefaultChatTransport<RagUIMessage>({ api: `${base}/api/chat/ui`, ...(user ? { headers: t.auth(user) } : {}), ...extra });
  const userMessage = (text: string): RagUIMessage => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
  const send = (client: DefaultChatTransport<RagUIMessage>, chatId: string, messages: RagUIMessage[], abortSignal?: AbortSignal) =>
    client.sendMessages({ chatId, messages, trigger: 'submit-message', messageId: undefined, abortSignal });

  /** Reads a UI message stream to its end with the SDK's reader: the final assistant message and the errors it reported. */
  async function read(stream: ReadableStream<UIMessageChunk>): Promise<{ message: RagUIMessage; errors: string[] }> {
    const errors: string[] = [];
    let message: RagUIMessage | undefined;
    for await (const snapshot of readUIMessageStream<RagUIMessage>({ stream, onError: (error) => errors.push((error as Error).message) })) {
      message = snapshot;
    }
    if (!message) throw new Error('the stream carried no message');
    return { message, errors };
  }
  const textOf = (message: RagUIMessage) => message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const dataParts = <T extends 'data-step' | 'data-tool' | 'data-trace' | 'data-hitl'>(message: RagUIMessage, type: T) =>
    message.parts.filter((part): part is Extract<RagUIMessage['parts'][number], { type: T }> => part.type === type);
  const transcript = async (user: string, session: string) =>
    (await request(t.app.getHttpServer()).get(`/api/sessions/${session}/messages`).set(t.auth(user)).expect(200)).body.messages as Array<{
      type: string;
      content: string;
    }>;
  /** The JSON error body the transport puts in the message of the Error it throws. */
  const refusal = async (attempt: Promise<unknown>) => {
    const error = await attempt.then(
      () => {
        throw new Error('the request was accepted');
      },
      (e: Error) => e,
    );
    return JSON.parse(error.message) as { statusCode: number; message: string; code?: string };
  };

  it('streams a knowledge answer as text with step, tool and trace parts, stores the turn, and continues the session on the next message', async () => {
    const user = uniqueUser('ui-kb');
    const chatId = 'k3Yq9xVbN2aT7pLd';
    const sessionId = t.app.get(UiSessionIds).forChat(user, chatId);
    // Extra fields the transport adds to the body are ignored, not refused.
    const responses: Response[] = [];
    const client = transport(user, {
      body: { client_hint: 'web' },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        responses.push(response.clone());
        return response;
      },
    });
    const question = userMessage('How long is the Aurora X2 warranty?');
    const first = await read(await send(client, chatId, [question]));
    expect(responses[0].headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(responses[0].headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await responses[0].text()).toMatch(/data: \{"type":"finish"[^\n]*\n\ndata: \[DONE\]\n\n$/);

    expect(first.errors).toEqual([]);
    expect(first.message.role).toBe('assistant');
    expect(first.message.metadata).toEqual({ run_id: first.message.id, session_id: sessionId });
    const answer = textOf(first.message);
    expect(answer).toMatch(/three-year/);
    expect(answer).toMatch(/\[[a-z0-9-]+\.md\]/); // the local model cites its sources
    const stages = dataParts(first.message, 'data-step').map((part) => part.data.stage);
    expect(stages).toEqual(expect.arrayContaining(['recall', 'rerank', 'grade']));
    // One part per tool call: its start was replaced by its end.
    const tools = dataParts(first.message, 'data-tool');
    expect(tools).toHaveLength(1);
    expect(tools[0].data).toMatchObject({ name: 'knowledge_search', phase: 'end', summary: { output: expect.any(String) } });
    const [trace] = dataParts(first.message, 'data-trace');
    expect(trace.data).toMatchObject({ tool_used: true, query: 'How long is the Aurora X2 warranty?', grade_route: 'answer' });
    expect(trace.data.final_chunks!.length).toBeGreaterThan(0);
    expect(dataParts(first.message, 'data-hitl')).toEqual([]);

    expect(await transcript(user, sessionId)).toMatchObject([
      { type: 'human', content: 'How long is the Aurora X2 warranty?' },
      { type: 'ai', content: answer },
    ]);

    // useChat sends the whole conversation; only its last message is the turn, the stored session is the history.
    const followUp = userMessage('How do I reset the Aurora X1 router?');
    const second = await read(await send(client, chatId, [question, first.message, followUp]));
    expect(second.errors).toEqual([]);
    expect(second.message.id).not.toBe(first.message.id);
    expect(second.message.metadata?.session_id).toBe(sessionId);
    expect(textOf(second.message)).toContain('[aurora-x1-router-manual.md]');
    const messages = await transcript(user, sessionId);
    expect(messages.map((m) => m.type)).toEqual(['human', 'ai', 'human', 'ai']);
    expect(messages[2].content).toBe('How do I reset the Aurora X1 router?');
  });

  it("maps a chat id to a session of its own user only: the same id is another session for another user, and another user's session UUID is 404", async () => {
    const alice = uniqueUser('ui-alice');
    const bob = uniqueUser('ui-bob');
    const chatId = 'shared-chat-id';
    const hers = await read(await send(transport(alice), chatId, [userMessage('What is the return policy?')]));
    const his = await read(await send(transport(bob), chatId, [userMessage('What is the return policy?')]));
    expect(hers.message.metadata?.session_id).toBe(t.app.get(UiSessionIds).forChat(alice, chatId));
    expect(his.message.metadata?.session_id).toBe(t.app.get(UiSessionIds).forChat(bob, chatId));
    expect(his.message.metadata?.session_id).not.toBe(hers.message.metadata?.session_id);
    expect(await transcript(alice, hers.message.metadata!.session_id)).toHaveLength(2);

    const aliceSession = hers.message.metadata!.session_id;
    const forged = await refusal(send(transport(bob), aliceSession, [userMessage('Show me her chat')]));
    expect(forged).toMatchObject({ statusCode: 404, code: 'session_not_found' });
    await expect(transport(bob).reconnectToStream({ chatId: aliceSession })).rejects.toThrow(/"statusCode":404/);
    // Upper case spells the same UUID.
    const again = await read(await send(transport(alice), aliceSession.toUpperCase(), [userMessage('How do I return a product?')]));
    expect(again.message.metadata?.session_id).toBe(aliceSession);
    expect(await transcript(alice, aliceSession)).toHaveLength(4);
  });

  it('pauses an ambiguous question with a data-hitl part and its question as text; the next message resumes the paused run', async () => {
    const user = uniqueUser('ui-hitl');
    const client = transport(user);
    const chatId = 'hitl-chat';
    const question = userMessage('How do I reset the router?');
    const paused = await read(await send(client, chatId, [question]));
    const [hitl] = dataParts(paused.message, 'data-hitl');
    expect(hitl.data).toMatchObject({
      hitl_type: 'choose',
      original_question: 'How do I reset the router?',
      options: expect.arrayContaining(['Aurora X1 Router — User Manual', 'Aurora X2 Mesh System — User Manual']),
    });
    expect(textOf(paused.message)).toBe(hitl.data.clarification_prompt);
    expect(dataParts(paused.message, 'data-trace')[0].data).toMatchObject({ grade_route: 'clarify', evidence_status: 'needs_choice' });

    // Sending only the last message (as docs/client-protocols.md suggests for long chats) is enough: the session holds the history.
    const lastOnly = transport(user, {
      prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, messages: messages.slice(-1), trigger: 'submit-message' } }),
    });
    const resumed = await read(await send(lastOnly, chatId, [question, paused.message, userMessage('X1')]));
    expect(resumed.errors).toEqual([]);
    expect(dataParts(resumed.message, 'data-hitl')).toEqual([]);
    expect(dataParts(resumed.message, 'data-trace')[0].data).toMatchObject({ hitl_resumed: true, user_supplement: 'X1', query: 'How do I reset the router?' });
    expect(textOf(resumed.message)).toContain('[aurora-x1-router-manual.md]');
  });

  it('resumes a turn whose client left: reconnectToStream replays it from the start and follows it to the end; null when nothing runs', async () => {
    const user = uniqueUser('ui-resume');
    const client = transport(user);
    const chatId = 'resume-chat';
    expect(await client.reconnectToStream({ chatId })).toBeNull(); // no session yet

    weather.hold();
    const arrived = weather.nextRequest();
    const leaving = new AbortController();
    const original = await send(client, chatId, [userMessage('What is the weather in Paris?')], leaving.signal);
    await arrived; // the run is inside the weather tool
    leaving.abort(); // the tab closes; the run goes on
    await original.cancel().catch(() => undefined);

    const stream = await client.reconnectToStream({ chatId });
    expect(stream).not.toBeNull();
    // Another user's chat of the same id is another session, where nothing runs.
    expect(await transport(uniqueUser('ui-other')).reconnectToStream({ chatId })).toBeNull();
    const reading = read(stream!);
    weather.release();
    const { message, errors } = await reading;
    expect(errors).toEqual([]);
    expect(message.metadata?.session_id).toBe(t.app.get(UiSessionIds).forChat(user, chatId));
    expect(dataParts(message, 'data-tool').map((part) => part.data)).toMatchObject([{ name: 'get_weather', phase: 'end' }]);
    expect(textOf(message)).toMatch(/Paris/);
    const stored = await transcript(user, t.app.get(UiSessionIds).forChat(user, chatId));
    expect(stored.map((m) => m.type)).toEqual(['human', 'ai']);
    expect(stored[1].content).toBe(textOf(message));
    expect(await client.reconnectToStream({ chatId })).toBeNull(); // the run is over
  });

  it('ends a cancelled turn with an in-band error chunk "<code>: <message>"; a message sent while a turn runs is a plain 409', async () => {
    const user = uniqueUser('ui-cancel');
    const client = transport(user);
    const chatId = 'cancel-chat';
    weather.hold();
    const arrived = weather.nextRequest();
    const stream = await send(client, chatId, [userMessage('What is the weather in Paris?')]);
    await arrived;
    const busy = await refusal(send(client, chatId, [userMessage('And in Berlin?')]));
    expect(busy).toMatchObject({ statusCode: 409, code: 'run_in_progress', run_id: expect.any(String) });
    const runId = (busy as unknown as { run_id: string }).run_id;
    await request(t.app.getHttpServer()).post(`/api/chat/runs/${runId}/cancel`).set(t.auth(user)).expect(200);
    const { message, errors } = await read(stream);
    weather.release();
    expect(message.id).toBe(runId);
    expect(errors).toEqual([expect.stringMatching(/^cancelled: /)]);
    expect(message.metadata).toEqual({ run_id: runId, session_id: expect.any(String), message_saved: true });
    expect(await client.reconnectToStream({ chatId })).toBeNull();
  });

  it('resumes a run started on /api/chat/stream when the chat id is its session UUID', async () => {
    const user = uniqueUser('ui-held');
    const sessionId = randomUUID();
    const held = await heldWeatherTurn(base, t.auth(user), weather, sessionId);
    try {
      const stream = await transport(user).reconnectToStream({ chatId: sessionId });
      const reading = read(stream!);
      weather.release();
      const { message } = await reading;
      expect(message.id).toBe(held.runId);
      expect(message.metadata).toEqual({ run_id: held.runId, session_id: sessionId });
      expect(textOf(message)).toMatch(/Paris/);
    } finally {
      weather.release();
      await held.stream.ended;
    }
  });

  it('is described in the OpenAPI document: the transport body, an event-stream answer, its error statuses, 204 for the reconnect', async () => {
    const doc = (await request(t.app.getHttpServer()).get('/docs-json').expect(200)).body;
    const post = doc.paths['/api/chat/ui'].post;
    const resume = doc.paths['/api/chat/ui/{id}/stream'].get;
    expect(post.tags).toEqual(['chat']);
    expect(post.security).toEqual([{ bearer: [] }]);
    expect(post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/UiChatRequest');
    expect(Object.keys(doc.components.schemas.UiChatRequest.properties).sort()).toEqual(['collection_ids', 'id', 'messageId', 'messages', 'trigger']);
    expect(Object.keys(post.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(post.responses).sort()).toEqual(['200', '400', '401', '404', '409', '413', '415', '429', '503']);
    // 410 run_events_gone: the run ended, its events expired, between the status check and the read.
    expect(Object.keys(resume.responses).sort()).toEqual(['200', '204', '400', '401', '404', '410', '503']);
    expect(resume.responses['410'].description).toContain('run_events_gone');
    expect(resume.security).toEqual([{ bearer: [] }]);
  });

  it('counts turns against the per-user chat rate limit: 429 before the stream opens; a body refused with 415 counts none', async () => {
    const limited = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '1' });
    try {
      const limitedBase = await limited.listen();
      const user = uniqueUser('ui-limit');
      const client = new DefaultChatTransport<RagUIMessage>({ api: `${limitedBase}/api/chat/ui`, headers: limited.auth(user) });
      // A body refused for its media type spends no turn.
      await request(limited.app.getHttpServer()).post('/api/chat/ui').set(limited.auth(user)).set('Content-Type', 'text/plain').send('{}').expect(415);
      await read(await send(client, 'limit-a', [userMessage('What is the return policy?')]));
      expect(await refusal(send(client, 'limit-b', [userMessage('What is the return policy?')]))).toMatchObject({ statusCode: 429 });
    } finally {
      await limited.close();
    }
  });

  it('refuses a request without a token with 401 on both routes', async () => {
    expect(await refusal(send(transport(), 'no-token', [userMessage('hello')]))).toMatchObject({ statusCode: 401 });
    await expect(transport().reconnectToStream({ chatId: 'no-token' })).rejects.toThrow(/"statusCode":401/);
  });

  it('refuses a body that is not JSON (text/plain, a form, XML) with a 415, as /v1, /mcp and /langgraph do, and stores nothing', async () => {
    const user = uniqueUser('ui-media');
    const server = () => request(t.app.getHttpServer());
    const body = JSON.stringify({ id: 'media-chat', messages: [userMessage('What is the return policy?')], trigger: 'submit-message' });
    const plain = await server().post('/api/chat/ui').set(t.auth(user)).set('Content-Type', 'text/plain').send(body).expect(415);
    expect(plain.body).toMatchObject({ code: 'unsupported_encoding' });
    expect(plain.body.message).toMatch(/Content-Type: application\/json \(not text\/plain\)/);
    await server().post('/api/chat/ui').set(t.auth(user)).type('form').send({ id: 'media-chat' }).expect(415);
    await server().post('/api/chat/ui').set(t.auth(user)).set('Content-Type', 'application/xml').send('<chat/>').expect(415);
    // A request without a body is still answered as a JSON route answers an empty one: 400 naming what is missing.
    await server().post('/api/chat/ui').set(t.auth(user)).set('Content-Length', '0').expect(400);
    expect((await server().get('/api/sessions').set(t.auth(user)).expect(200)).body.sessions).toEqual([]);
  });

  it('refuses hostile and unusable bodies with 400 naming the field, and stores nothing', async () => {
    const user = uniqueUser('ui-hostile');
    const client = transport(user);
    const chatId = 'hostile-chat';
    const hostile = (messages: unknown, override: Record<string, unknown> = {}) =>
      refusal(
        transport(user, { prepareSendMessagesRequest: ({ id, body }) => ({ body: { ...body, id, messages, trigger: 'submit-message', ...override } }) }).sendMessages({
          chatId,
          messages: [],
          trigger: 'submit-message',
          messageId: undefined,
          abortSignal: undefined,
        }),
      );
    const nested = (depth: number): unknown => (depth === 0 ? 'x' : { a: nested(depth - 1) });
    const text = (value: unknown) => [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: value }] }];
    const cases: Array<[() => Promise<{ statusCode: number; message: string }>, RegExp]> = [
      // A value of the wrong type is named by its type alone, not by every rule it therefore also breaks.
      [() => hostile('not a list'), /^messages must be an array$/],
      [() => hostile([]), /messages should not be empty/],
      [() => hostile([null]), /messages\[0\]/],
      [() => hostile([{ id: 'm1', role: 'user', parts: 'text' }]), /^messages\[0\]\.parts must be an array$/],
      [() => hostile([{ id: 'm1', role: 'user', parts: [null] }]), /messages\[0\]\.parts\[0\]/],
      [() => hostile([{ id: 'm1', role: 'robot', parts: [] }]), /messages\[0\]\.role must be one of/],
      [() => hostile(text(42)), /messages\[0\]\.parts\[0\]\.text must be a string/],
      [() => hostile(text('   \u200b ')), /messages\[0\] text/],
      [() => hostile(text('a\u0000b')), /messages\[0\] text/],
      [() => hostile(text('x'.repeat(8001))), /messages\[0\] text must be shorter than or equal to 8000 characters/],
      [
        () => hostile([{ id: 'm1', role: 'user', parts: [{ type: 'file', url: 'data:,x', mediaType: 'text/plain' }] }]),
        /last message must be the user's, with at least one text part/,
      ],
      [() => hostile([...text('hi'), { id: 'm2', role: 'assistant', parts: [{ type: 'text', text: 'hello' }] }]), /messages\[1\]: the last message must be the user's/],
      [() => hostile(Array.from({ length: 1001 }, () => text('hi')[0])), /messages must contain no more than 1000 elements/],
      [() => hostile([...Array.from({ length: 1000 }, () => text('hi')[0]), null]), /messages must contain no more than 1000 elements/],
      [() => hostile(text('hi'), { id: '../../etc' }), /^id must be 1–100 characters/],
      [() => hostile(text('hi'), { id: { $ne: 1 } }), /^id must be/],
      [() => hostile(text('hi'), { trigger: 'resume-stream' }), /^trigger must be one of/],
      [() => hostile(text('hi'), JSON.parse('{"__proto__": {"role": "admin"}}') as Record<string, unknown>), /__proto__/],
      [() => hostile([{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi', providerMetadata: JSON.parse('{"a":{"constructor":{}}}') }] }]), /constructor/],
      [() => hostile([{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi', providerMetadata: nested(40) }] }]), /nested deeper than 32 levels/],
    ];
    for (const [attempt, pattern] of cases) {
      const body = await attempt();
      expect(body.statusCode).toBe(400);
      expect(body.message).toMatch(pattern);
    }
    expect(await hostile(text('x'.repeat(1_100_000)))).toMatchObject({ statusCode: 413 }); // over BODY_LIMIT
    // The whole body being something other than an object.
    const notAnObject = await refusal(
      transport(user, { prepareSendMessagesRequest: () => ({ body: ['id', 'messages'] }) }).sendMessages({
        chatId,
        messages: [],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(notAnObject).toMatchObject({ statusCode: 400, message: 'The body must be a JSON object' });
    const regenerate = await refusal(client.sendMessages({ chatId, messages: [userMessage('hi')], trigger: 'regenerate-message', messageId: 'm0', abortSignal: undefined }));
    expect(regenerate).toMatchObject({ statusCode: 400, message: expect.stringMatching(/regenerate-message" is not supported/) });
    await expect(client.reconnectToStream({ chatId: 'not a chat id' })).rejects.toThrow(/"statusCode":400/);
    const sessions = await request(t.app.getHttpServer()).get('/api/sessions').set(t.auth(user)).expect(200);
    expect(sessions.body.sessions).toEqual([]);
  });
});
