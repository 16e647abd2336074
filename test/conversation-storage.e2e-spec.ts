import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { toLangChainMessages } from '../src/session/langchain-messages.js';
import { SessionNotFoundError } from '../src/session/session.errors.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

describe('session storage on PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('loses nothing when 20 turns are appended to one session at once', async () => {
    const user = uniqueUser('concurrent');
    const session = randomUUID();
    const turns = Array.from({ length: 20 }, (_, i) =>
      t.storage.appendTurn(user, session, [
        { type: 'human', content: `question ${i}` },
        { type: 'ai', content: `answer ${i}` },
      ]),
    );
    const results = await Promise.all(turns);
    expect(results.filter((r) => r.created)).toHaveLength(1);

    const rows: Array<{ seq: number; content: string }> = await t.dataSource.query('SELECT seq, content FROM chat_messages WHERE session_id = $1 ORDER BY seq', [session]);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Each turn's two messages are adjacent and in order: question i directly followed by answer i.
    for (let i = 0; i < rows.length; i += 2) {
      const n = rows[i].content.replace('question ', '');
      expect(rows[i + 1].content).toBe(`answer ${n}`);
    }
    expect(new Set(rows.map((r) => r.content)).size).toBe(40);
    const [{ message_count }] = await t.dataSource.query('SELECT message_count FROM chat_sessions WHERE id = $1', [session]);
    expect(message_count).toBe(40);
  });

  it("refuses to append to another user's session, and leaves it untouched", async () => {
    const owner = uniqueUser('owner');
    const session = randomUUID();
    await t.storage.appendTurn(owner, session, [{ type: 'human', content: 'mine' }]);
    await expect(t.storage.appendTurn(uniqueUser('thief'), session, [{ type: 'human', content: 'theirs' }])).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(t.storage.openSession(uniqueUser('thief'), session, 'theirs')).rejects.toBeInstanceOf(SessionNotFoundError);
    expect(await t.storage.getSessionMessages(uniqueUser('thief'), session)).toBeNull();
    const messages = await t.storage.getSessionMessages(owner, session);
    expect(messages?.map((m) => m.content)).toEqual(['mine']);
  });

  it('loads history as LangChain messages, with metadata merged across turns', async () => {
    const user = uniqueUser('loader');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [{ type: 'system', content: 'be brief' }], { metadata: { a: 1 } });
    await t.storage.appendTurn(
      user,
      session,
      [
        { type: 'human', content: '天气如何？' },
        { type: 'ai', content: 'Sunny.' },
      ],
      { metadata: { b: 2 } },
    );
    // What a turn reads to build the model's context.
    const context = await t.storage.reads.getTurnContext(user, session, 10);
    const history = toLangChainMessages(context!.recent);
    expect(history.map((m) => m.constructor)).toEqual([SystemMessage, HumanMessage, AIMessage]);
    expect(history[1].content).toBe('天气如何？');
    expect(context!.metadata).toEqual({ a: 1, b: 2 });
    expect(context!.messageCount).toBe(3);
    expect((await t.storage.reads.getTurnContext(user, session, 2))!.recent.map((m) => m.content)).toEqual(['天气如何？', 'Sunny.']);
    expect(await t.storage.reads.getTurnContext(uniqueUser('nobody'), session, 10)).toBeNull();
    expect(await t.storage.reads.sessionMetadata(uniqueUser('nobody'), session)).toBeNull();
  });

  it('lists sessions newest first and keeps the first title', async () => {
    const user = uniqueUser('ids');
    const a = randomUUID();
    const b = randomUUID();
    await t.storage.appendTurn(user, a, [{ type: 'human', content: 'first title' }]);
    await t.storage.appendTurn(user, b, [{ type: 'human', content: 'second' }]);
    await t.storage.appendTurn(user, a, [{ type: 'human', content: 'not a new title' }]);
    const page = await t.storage.listSessionInfos(user);
    expect(page.sessions.map((s) => s.session_id)).toEqual([a, b]);
    expect(page.sessions.find((s) => s.session_id === a)?.title).toBe('first title');
  });

  it('normalizes traces before writing them', async () => {
    const user = uniqueUser('trace-write');
    const session = randomUUID();
    await t.storage.appendTurn(user, session, [
      {
        type: 'ai',
        content: 'answer',
        rag_trace: { tool_used: true, secret_field: 'dropped', final_chunks: [{ text: 'no source' }] },
      },
    ]);
    const [{ rag_trace }] = await t.dataSource.query('SELECT rag_trace FROM chat_messages WHERE session_id = $1', [session]);
    expect(rag_trace).toEqual({ tool_used: true, final_chunks: [], protocol_version: 1 });
  });
});
