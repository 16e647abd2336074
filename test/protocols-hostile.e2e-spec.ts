import OpenAI, { BadRequestError } from 'openai';
import request from 'supertest';
import { AgentFactory } from '../src/agent/agent.factory.js';
import { ChatService } from '../src/chat/chat.service.js';
import { UiSessionIds } from '../src/protocols/ai-sdk/ui-session-id.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { FakeWeatherServer } from './support/fake-weather-server.js';

/*
 * What a hostile review of the ecosystem protocols (OpenAI-compatible API,
 * AI SDK UI stream) found; each test failed before its fix.
 */

function bearer(header: { Authorization: string }): string {
  return header.Authorization.replace(/^Bearer /, '');
}

/** The threads that have checkpoints, with how many each. */
async function checkpointThreads(t: TestApp): Promise<Array<{ thread_id: string; n: number }>> {
  return t.dataSource.query('SELECT thread_id, count(*)::int AS n FROM checkpoints GROUP BY thread_id ORDER BY thread_id');
}

describe('ecosystem protocols under hostile clients', () => {
  let t: TestApp;
  let base: string;
  const weather = new FakeWeatherServer();
  const client = (user: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey: bearer(t.auth(user)), maxRetries: 0, timeout: 120_000 });

  beforeAll(async () => {
    await weather.start();
    t = await createTestApp({ WEATHER_BASE_URL: weather.url, WEATHER_GEOCODING_URL: weather.url, RATE_LIMIT_CHAT_PER_MINUTE: '1000' });
    base = await t.listen();
  });
  afterAll(async () => {
    weather.release();
    await t.close();
    await weather.stop();
  });

  it('refuses a NUL character in a refusal content part of the last user message with a 400 (a session turn stores it)', async () => {
    const user = uniqueUser('rv-nul');
    const session = crypto.randomUUID();
    const error = await client(user)
      .chat.completions.create(
        {
          model: 'rag-agent',
          messages: [{ role: 'user', content: [{ type: 'refusal', refusal: 'Hello\u0000there' }] as never }],
        },
        { headers: { 'X-Session-Id': session } },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, param: expect.stringContaining('messages[0].content') });
  });

  it('refuses a lone surrogate in a refusal content part of the last user message with a 400', async () => {
    const user = uniqueUser('rv-sur');
    const session = crypto.randomUUID();
    const error = await client(user)
      .chat.completions.create(
        {
          model: 'rag-agent',
          messages: [{ role: 'user', content: [{ type: 'refusal', refusal: 'Hello \ud800 there' }] as never }],
        },
        { headers: { 'X-Session-Id': session } },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
  });

  it('refuses a stateless conversation too long to send to the model, and a message too long once its parts are joined', async () => {
    const openai = client(uniqueUser('rv-long'));
    const part = { type: 'text' as const, text: '漢字かな交じり文'.repeat(4000) };
    const joined = await openai.chat.completions
      .create({
        model: 'rag-agent',
        messages: [
          { role: 'system', content: [part, part] },
          { role: 'user', content: 'Hello' },
        ],
      })
      .catch((caught: unknown) => caught);
    expect(joined).toMatchObject({ status: 400, param: 'messages[0].content' });
    const many = Array.from({ length: 4 }, () => ({ role: 'system' as const, content: part.text }));
    const long = await openai.chat.completions.create({ model: 'rag-agent', messages: [...many, { role: 'user', content: 'Hello' }] }).catch((caught: unknown) => caught);
    expect(long).toMatchObject({ status: 400, param: 'messages' });
  });

  it('does not let another user pre-claim the session an AI SDK chat id of a user maps to', async () => {
    const victim = uniqueUser('rv-victim');
    const attacker = uniqueUser('rv-attacker');
    const chatId = 'k3Yq9xVbN2aT7pLd';
    // The mapping is keyed by the server's secret: an instance with another secret maps the same chat elsewhere,
    // so knowing the code and the user id is not enough to compute the session.
    const elsewhere = await createTestApp({ JWT_SECRET: 'another-secret-of-the-required-length-0123456789' });
    let guessed: string;
    try {
      guessed = elsewhere.app.get(UiSessionIds).forChat(victim, chatId);
    } finally {
      await elsewhere.close();
    }
    expect(guessed).not.toBe(t.app.get(UiSessionIds).forChat(victim, chatId));
    await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(attacker)).send({ message: 'Hello', session_id: guessed }).expect(200);
    const answer = await request(t.app.getHttpServer())
      .post('/api/chat/ui')
      .set(t.auth(victim))
      .send({ id: chatId, trigger: 'submit-message', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hello' }] }] });
    expect(answer.status).toBe(200);
  });

  it('leaves no checkpoint behind a stateless streamed turn whose client left mid-tool', async () => {
    const user = uniqueUser('rv-abort');
    await t.app.get(ChatService).drain(); // earlier tests' streamed turns delete their checkpoints after their streams end
    const before = await checkpointThreads(t);
    weather.hold();
    const arrived = weather.nextRequest();
    const abort = new AbortController();
    const stream = await client(user).chat.completions.create(
      { model: 'rag-agent', stream: true, messages: [{ role: 'user', content: 'What is the weather in Paris?' }] },
      { signal: abort.signal },
    );
    const reading = (async () => {
      for await (const _chunk of stream) void _chunk;
    })().catch(() => undefined);
    await arrived;
    abort.abort();
    await reading;
    weather.release();
    await t.app.get(ChatService).drain();
    // A stateless turn keeps its checkpoints in memory while it runs, and a step that ends after the abort writes nothing.
    expect(await checkpointThreads(t)).toEqual(before);
    expect(t.app.get(AgentFactory).ephemeralSaver.storedThreads).toBe(0);
  });
});
