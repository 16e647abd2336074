import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';
import { createCollection, Headers, setAccess, uploadTo } from './support/collections.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/** Issue 23, item 4: the collections a turn names, in every body that takes them, and those saved on a session. */
describe('Collections named by a turn, a search and a session', () => {
  let t: TestApp;
  const server = () => t.app.getHttpServer();
  const marker = `lanternwick${Date.now().toString(36)}`;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0', RATE_LIMIT_SEARCH_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());

  /** A collection of a new owner holding one document about `marker`; returns its id and its owner. */
  async function ownCollection(name: string): Promise<{ id: string; ownerId: string; owner: Headers }> {
    const ownerId = uniqueUser('owner');
    const owner = t.auth(ownerId);
    const { id } = await createCollection(t, owner, name);
    await uploadTo(t, owner, id, `${name.toLowerCase()}.md`, `# ${name}\n\nThe ${marker} of ${name} is kept in the ${name} cellar.\n`);
    return { id, ownerId, owner };
  }

  /** The collections of the chunks the turn's recall found (the evidence before the minimum relevance cut) and kept. */
  const chunkCollections = (trace: { initial_chunks?: Array<{ collection_id?: string }>; final_chunks?: Array<{ collection_id?: string }> }) => [
    ...new Set([...(trace.initial_chunks ?? []), ...(trace.final_chunks ?? [])].map((chunk) => chunk.collection_id)),
  ];

  it('saves collections on a session with PATCH, searches them in its turns, and answers 404 once one is no longer readable', async () => {
    const shared = await ownCollection('Ember');
    const readerId = uniqueUser('reader');
    const reader = t.auth(readerId);
    await setAccess(t, shared.owner, shared.id, [
      { principal: `user:${shared.ownerId}`, role: 'owner' },
      { principal: `user:${readerId}`, role: 'viewer' },
    ]);
    const first = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} of Ember kept?` })
      .expect(200);
    const session = first.body.session_id as string;
    expect(chunkCollections(first.body.rag_trace)).toContain(shared.id);

    // Saved (as the id it names; `default` is the default collection's) and shown on the session, in the list too.
    const patched = await request(server())
      .patch(`/api/sessions/${session}`)
      .set(reader)
      .send({ collection_ids: ['default', DEFAULT_COLLECTION_ID.toUpperCase()] })
      .expect(200);
    expect(patched.body).toMatchObject({ session_id: session, collection_ids: [DEFAULT_COLLECTION_ID] });
    const listed = await request(server()).get('/api/sessions').set(reader).expect(200);
    expect(listed.body.sessions.find((s: { session_id: string }) => s.session_id === session).collection_ids).toEqual([DEFAULT_COLLECTION_ID]);
    const inDefault = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} of Ember kept?`, session_id: session })
      .expect(200);
    expect(chunkCollections(inDefault.body.rag_trace)).toEqual([DEFAULT_COLLECTION_ID]);
    // A turn that names its collections wins over the saved ones.
    const named = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} of Ember kept?`, session_id: session, collection_ids: [shared.id.toUpperCase()] })
      .expect(200);
    expect(chunkCollections(named.body.rag_trace)).toEqual([shared.id]);

    await request(server())
      .patch(`/api/sessions/${session}`)
      .set(reader)
      .send({ collection_ids: [shared.id], title: 'Ember only' })
      .expect(200);
    const saved = await request(server()).get(`/api/sessions/${session}`).set(reader).expect(200);
    expect(saved.body).toMatchObject({ title: 'Ember only', collection_ids: [shared.id] });
    const inShared = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} kept?`, session_id: session })
      .expect(200);
    expect(chunkCollections(inShared.body.rag_trace)).toEqual([shared.id]);

    // The share goes: the session's next turn answers 404 (nothing stored), until the choice is cleared.
    await setAccess(t, shared.owner, shared.id, [{ principal: `user:${shared.ownerId}`, role: 'owner' }]);
    const count = (await request(server()).get(`/api/sessions/${session}`).set(reader).expect(200)).body.message_count;
    const refused = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} kept?`, session_id: session })
      .expect(404);
    expect(refused.body).toMatchObject({ code: 'collection_not_found', message: expect.stringContaining(`saved on session ${session}`) });
    expect((await request(server()).get(`/api/sessions/${session}`).set(reader).expect(200)).body.message_count).toBe(count);
    const cleared = await request(server()).patch(`/api/sessions/${session}`).set(reader).send({ collection_ids: null }).expect(200);
    expect(cleared.body).toMatchObject({ title: 'Ember only', collection_ids: null });
    const again = await request(server())
      .post('/api/chat')
      .set(reader)
      .send({ message: `Where is the ${marker} kept?`, session_id: session })
      .expect(200);
    expect(chunkCollections(again.body.rag_trace)).not.toContain(shared.id);
  });

  it('refuses to save a collection the caller cannot read (404), on its own session only', async () => {
    const hidden = await ownCollection('Cinder');
    const userId = uniqueUser('saver');
    const user = t.auth(userId);
    const { session_id: session } = (await request(server()).post('/api/chat').set(user).send({ message: 'What is the warranty period?' }).expect(200)).body;
    const missing = randomUUID();
    for (const ids of [[hidden.id], [DEFAULT_COLLECTION_ID, missing], ['not-a-collection']]) {
      const res = await request(server()).patch(`/api/sessions/${session}`).set(user).send({ collection_ids: ids }).expect(404);
      expect(res.body.code).toBe('collection_not_found');
    }
    expect((await request(server()).get(`/api/sessions/${session}`).set(user).expect(200)).body.collection_ids).toBeNull();
    // Another user's session is not found, whatever it names.
    const other = await request(server())
      .patch(`/api/sessions/${session}`)
      .set(t.auth(uniqueUser('intruder')))
      .send({ collection_ids: ['default'] })
      .expect(404);
    expect(other.body.code).toBe('session_not_found');
    const empty = await request(server()).patch(`/api/sessions/${session}`).set(user).send({}).expect(400);
    expect(empty.body.code).toBe('invalid_request');
  });

  it('refuses hostile collection_ids with a 4xx and a code on every route that takes them, never a 500', async () => {
    const user = t.auth(uniqueUser('hostile'));
    const { session_id: session } = (await request(server()).post('/api/chat').set(user).send({ message: 'What is the warranty period?' }).expect(200)).body;
    const shapes: unknown[] = ['default', 42, {}, [], [42], [null], [['default']], ['x'.repeat(65)], Array.from({ length: 51 }, () => 'default'), ['x'.repeat(1_000_000)]];
    const unknown: unknown[] = [['\u0000'], ['\ud800'], ['default\u0000'], ['../default'], ['00000000-0000-4000-8000-00000000000g'], [' default']];
    const routes: Array<[string, (ids: unknown) => request.Test]> = [
      ['chat', (ids) => request(server()).post('/api/chat').set(user).send({ message: 'hi', collection_ids: ids })],
      ['stream', (ids) => request(server()).post('/api/chat/stream').set(user).send({ message: 'hi', collection_ids: ids })],
      ['search', (ids) => request(server()).post('/api/knowledge/search').set(user).send({ query: 'warranty', collection_ids: ids })],
      ['session', (ids) => request(server()).patch(`/api/sessions/${session}`).set(user).send({ collection_ids: ids })],
      [
        'ui',
        (ids) =>
          request(server())
            .post('/api/chat/ui')
            .set(user)
            .send({ id: randomUUID(), messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }], trigger: 'submit-message', collection_ids: ids }),
      ],
    ];
    for (const [route, send] of routes) {
      for (const ids of shapes) {
        const res = await send(ids);
        // A megabyte of id is refused by the body's limit or by the id's length, either way before any query.
        const status = ids === shapes.at(-1) && res.status === 413 ? 400 : res.status;
        expect([route, JSON.stringify(ids).slice(0, 40), status, res.body.code]).toEqual([route, JSON.stringify(ids).slice(0, 40), 400, expect.any(String)]);
      }
      for (const ids of unknown) {
        const res = await send(ids);
        expect([route, JSON.stringify(ids), res.status, res.body.code]).toEqual([route, JSON.stringify(ids), 404, 'collection_not_found']);
      }
    }
    const v1 = (collectionIds: unknown) =>
      request(server())
        .post('/v1/chat/completions')
        .set(user)
        .send({ model: t.config.chat.openAiModelId, messages: [{ role: 'user', content: 'hi' }], metadata: { collection_ids: collectionIds } });
    for (const ids of ['default,,default', ',', 'x'.repeat(65), Array.from({ length: 51 }, () => 'default').join(','), 'x'.repeat(513), ['default'], 7]) {
      const res = await v1(ids);
      expect([String(ids).slice(0, 20), res.status, res.body.error?.param]).toEqual([String(ids).slice(0, 20), 400, 'metadata.collection_ids']);
    }
    for (const ids of ['\u0000', 'default,\ud800', randomUUID()]) {
      const res = await v1(ids);
      expect([res.status, res.body.error?.code]).toEqual([404, 'collection_not_found']);
    }
    // Blank means none named; ids separated by commas, spaces around them ignored.
    await v1('').expect(200);
    const both = await v1(` default , ${DEFAULT_COLLECTION_ID} `).expect(200);
    expect(both.body.choices[0].message.content).toEqual(expect.any(String));
  });
});
