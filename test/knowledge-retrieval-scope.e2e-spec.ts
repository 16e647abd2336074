import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { adminAuth } from './support/admin.js';
import { createCollection, groupAuth, Headers, setAccess, uploadTo } from './support/collections.js';
import { readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const WAYS = ['chat', 'stream', 'v1', 'v1-stream', 'ui'] as const;
type Way = (typeof WAYS)[number];

interface Outcome {
  status: number;
  code?: string;
  answer: string;
  trace: Record<string, unknown> | null;
}

/** Every object of a trace that is a retrieved chunk (it has a `source`), in any list, sub-trace or snapshot. */
function chunksIn(value: unknown): Array<{ source: string; collection_id?: string; text?: string }> {
  if (Array.isArray(value)) return value.flatMap(chunksIn);
  if (value === null || typeof value !== 'object') return [];
  const own = typeof (value as { source?: unknown }).source === 'string' ? [value as { source: string }] : [];
  return [...own, ...Object.values(value).flatMap(chunksIn)];
}

/** The JSON `data:` payloads of an SSE body (the OpenAI and AI SDK streams), `[DONE]` left out. */
function dataLines(raw: string): Array<Record<string, unknown>> {
  return raw
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
}

/**
 * Issue 23, item 4: retrieval sees only what the caller may read, whichever way the question comes in. Alice's private
 * collection holds a unique fact; bob never retrieves it, even naming it word for word; carol (group finance) does once
 * it is shared with her group, and no longer on her next request to the other instance once the share is removed.
 */
describe('Retrieval sees only what the caller may read', () => {
  let t: TestApp;
  let other: TestApp;
  let base: string;
  let otherBase: string;
  const secret = `marigold${Date.now().toString(36)}zephyr`;
  const FACT = `The Quillfeather vault opens with the passphrase ${secret}.`;
  const FILENAME = `quillfeather-vault-${randomUUID().slice(0, 8)}.md`;
  const aliceId = uniqueUser('alice');
  let alice: Headers;
  let collection: string;

  beforeAll(async () => {
    const env = { RATE_LIMIT_CHAT_PER_MINUTE: '0', RATE_LIMIT_SEARCH_PER_MINUTE: '0' };
    t = await createTestApp(env);
    other = await createTestApp(env);
    base = await t.listen();
    otherBase = await other.listen();
    alice = t.auth(aliceId);
    collection = (await createCollection(t, alice, 'Alice private')).id;
    await uploadTo(t, alice, collection, FILENAME, `# Quillfeather vault\n\n${FACT} Only the finance team may open it.\n`);
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  /** One turn asking `message` through `way` on `app`, naming `collectionIds` if given: its answer and trace. */
  async function turn(app: TestApp, url: string, headers: Headers, way: Way, message: string, collectionIds?: unknown): Promise<Outcome> {
    const named = collectionIds === undefined ? {} : { collection_ids: collectionIds };
    const post = (path: string, body: object) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (way === 'chat') {
      const res = await request(app.app.getHttpServer())
        .post('/api/chat')
        .set(headers)
        .send({ message, ...named });
      return { status: res.status, code: res.body.code, answer: res.body.response ?? '', trace: res.body.rag_trace ?? null };
    }
    if (way === 'stream') {
      const res = await readSse(`${url}/api/chat/stream`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message, ...named }),
      });
      if (res.status !== 200) return { status: res.status, code: JSON.parse(res.raw).code, answer: '', trace: null };
      const tokens = res.events.filter((e) => e.event === 'token').map((e) => e.data.text as string);
      return { status: 200, answer: tokens.join(''), trace: res.events.find((e) => e.event === 'trace')?.data ?? null };
    }
    if (way === 'v1' || way === 'v1-stream') {
      const metadata = collectionIds === undefined ? {} : { metadata: { collection_ids: collectionIds } };
      const res = await post('/v1/chat/completions', {
        model: app.config.chat.openAiModelId,
        messages: [{ role: 'user', content: message }],
        stream: way === 'v1-stream',
        ...metadata,
      });
      const text = await res.text();
      if (res.status !== 200) return { status: res.status, code: JSON.parse(text).error.code, answer: '', trace: null };
      if (way === 'v1') {
        const body = JSON.parse(text);
        return { status: 200, answer: body.choices[0].message.content, trace: body.rag_trace };
      }
      const chunks = dataLines(text) as Array<{ choices: Array<{ delta: { content?: string } }>; rag_trace?: Record<string, unknown> }>;
      return { status: 200, answer: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), trace: chunks.find((c) => c.rag_trace)?.rag_trace ?? null };
    }
    const res = await post('/api/chat/ui', {
      id: randomUUID(),
      messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: message }] }],
      trigger: 'submit-message',
      ...named,
    });
    const text = await res.text();
    if (res.status !== 200) return { status: res.status, code: JSON.parse(text).code, answer: '', trace: null };
    const chunks = dataLines(text) as Array<{ type: string; delta?: string; data?: Record<string, unknown> }>;
    return { status: 200, answer: chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : [])).join(''), trace: chunks.find((c) => c.type === 'data-trace')?.data ?? null };
  }

  const search = (app: TestApp, headers: Headers, query: string, collectionIds?: unknown) =>
    request(app.app.getHttpServer())
      .post('/api/knowledge/search')
      .set(headers)
      .send({ query, top_k: 10, ...(collectionIds === undefined ? {} : { collection_ids: collectionIds }) });

  /** Nothing of alice's document in the outcome: not in any chunk list of the trace, not cited or quoted in the answer. */
  function expectNothingOfIt(outcome: Outcome, way: string): void {
    expect([way, outcome.status]).toEqual([way, 200]);
    expect(outcome.trace).not.toBeNull();
    expect(outcome.trace!.tool_used).toBe(true);
    expect(chunksIn(outcome.trace).filter((chunk) => chunk.collection_id === collection || chunk.source === FILENAME)).toEqual([]);
    expect(JSON.stringify(outcome.trace)).not.toContain(collection);
    expect(JSON.stringify(outcome.trace)).not.toContain(FILENAME);
    expect(outcome.answer).not.toContain(FILENAME);
    expect(outcome.answer).not.toContain('Only the finance team');
  }

  /** Alice's chunk among the outcome's final evidence, named by its collection, and its fact in the answer. */
  function expectToFindIt(outcome: Outcome, way: string): void {
    expect([way, outcome.status]).toEqual([way, 200]);
    const finalChunks = chunksIn(outcome.trace?.final_chunks);
    expect(finalChunks.find((chunk) => chunk.source === FILENAME)).toMatchObject({ collection_id: collection });
    expect(outcome.answer).toContain(secret);
  }

  it("never gives bob a chunk of alice's private collection, by any way in, even when he names the fact word for word", async () => {
    const bob = t.auth(uniqueUser('bob'));
    const question = `Does the Quillfeather vault open with the passphrase ${secret}?`;
    // Alice herself finds it: the fact is retrievable, so bob's empty-handed answers are the filter's doing.
    expectToFindIt(await turn(t, base, alice, 'chat', question), 'alice');
    for (const way of WAYS) expectNothingOfIt(await turn(t, base, bob, way, question), way);
    // A question of two parts is searched as sub-questions, each in the same scope.
    const twoParts = `Which passphrase opens the Quillfeather vault, ${secret}? Who may open the Quillfeather vault?`;
    const split = await turn(t, base, bob, 'chat', twoParts);
    expect(split.trace).toMatchObject({ complexity: 'complex', retrieval_stage: 'subquestion_merge' });
    expect((split.trace!.sub_traces as unknown[]).length).toBe(2);
    expectNothingOfIt(split, 'sub-questions');
    expectToFindIt(await turn(t, base, alice, 'chat', twoParts), 'alice, sub-questions');
    const found = await search(t, bob, question).expect(200);
    expect(found.body.chunks.filter((chunk: { source: string }) => chunk.source === FILENAME)).toEqual([]);
    expect(JSON.stringify(found.body)).not.toContain(collection);
    // Every chunk names its collection, in the results and the trace.
    for (const chunk of [...found.body.chunks, ...chunksIn(found.body.rag_trace)]) expect(chunk.collection_id).toMatch(/^[0-9a-f-]{36}$/);

    // Naming it answers as for a collection that does not exist, by every way; nothing is stored.
    for (const way of WAYS) {
      const refused = await turn(t, base, bob, way, question, way.startsWith('v1') ? collection : [collection]);
      expect([way, refused.status, refused.code]).toEqual([way, 404, 'collection_not_found']);
    }
    expect((await search(t, bob, question, [collection]).expect(404)).body.code).toBe('collection_not_found');

    // Nor does he reach it through the collection routes (item 5): not listed, not readable, no upload.
    const api = request(t.app.getHttpServer());
    const listed = await api.get('/api/knowledge/collections').set(bob).expect(200);
    expect(listed.body.collections.map((c: { id: string }) => c.id)).not.toContain(collection);
    expect((await api.get(`/api/knowledge/collections/${collection}`).set(bob).expect(404)).body.code).toBe('collection_not_found');
    expect((await api.get(`/api/knowledge/collections/${collection}/documents`).set(bob).expect(404)).body.code).toBe('collection_not_found');
    const upload = await api.post(`/api/knowledge/collections/${collection}/documents`).set(bob).attach('file', Buffer.from('# Bob\n\nMine now.'), 'bob.md');
    expect([upload.status, upload.body.code]).toEqual([404, 'collection_not_found']);
  });

  it('lets carol (group finance) find it once shared with her group, and not on her next request to the other instance once unshared', async () => {
    const carolId = uniqueUser('carol');
    const carol = groupAuth(t, carolId, ['finance']);
    const carolElsewhere = groupAuth(other, carolId, ['finance']);
    const question = 'Which passphrase opens the Quillfeather vault?';
    expectNothingOfIt(await turn(t, base, carol, 'chat', question), 'before the share');

    await setAccess(t, alice, collection, [
      { principal: `user:${aliceId}`, role: 'owner' },
      { principal: 'group:finance', role: 'viewer' },
    ]);
    for (const way of WAYS) expectToFindIt(await turn(t, base, carol, way, question), way);
    expectToFindIt(await turn(other, otherBase, carolElsewhere, 'chat', question), 'the other instance');
    const found = await search(other, carolElsewhere, question, [collection]).expect(200);
    expect(found.body.chunks.length).toBeGreaterThan(0);
    // Named alone, the search reads that collection only.
    expect(found.body.chunks.every((chunk: { collection_id: string }) => chunk.collection_id === collection)).toBe(true);

    await setAccess(t, alice, collection, [{ principal: `user:${aliceId}`, role: 'owner' }]);
    for (const way of WAYS) expectNothingOfIt(await turn(other, otherBase, carolElsewhere, way, question), `after the unshare, ${way}`);
    const after = await search(other, carolElsewhere, question).expect(200);
    expect(after.body.chunks.filter((chunk: { collection_id: string }) => chunk.collection_id === collection)).toEqual([]);
    expect((await search(other, carolElsewhere, question, [collection]).expect(404)).body.code).toBe('collection_not_found');
  });

  it("keeps a user's private collection out of an administrator's everyday answers, and searches it when the administrator names it", async () => {
    const admin = adminAuth(t);
    const question = 'Which passphrase opens the Quillfeather vault?';
    expectNothingOfIt(await turn(t, base, admin, 'chat', question), 'admin, default scope');
    expectToFindIt(await turn(t, base, admin, 'chat', question, [collection]), 'admin, named');
  });
});
