import request from 'supertest';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { DEFAULT_COLLECTION_ID } from '../src/knowledge/public-api.js';
import { adminAuth } from './support/admin.js';
import { createCollection, groupAuth, Headers, setAccess, uploadTo } from './support/collections.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { dropDatabase, freshDatabaseUrl } from './support/test-module.js';

/** Issue 23, item 1: collections, their routes and roles; a collection the caller cannot read is a 404, never a 403. */
describe('Knowledge collections', () => {
  let t: TestApp;
  let database: string;
  const server = () => t.app.getHttpServer();
  const api = (path: string) => `/api/knowledge/collections${path}`;
  const note = (label: string) => `# ${label}\nThe ${label} handbook says the ${label} budget closes on Friday. ${label}预算周五截止。`;

  beforeAll(async () => {
    database = freshDatabaseUrl();
    await ensureDatabase(database);
    t = await createTestApp({ DATABASE_URL: database, KNOWLEDGE_SEED_ON_START: 'false', KNOWLEDGE_CHUNK_SIZES: '400,120', KNOWLEDGE_CHUNK_OVERLAP: '0' });
  });

  afterAll(async () => {
    await t?.close();
    await dropDatabase(database);
  });

  it('makes its creator its owner and shows it to nobody else', async () => {
    const alice = t.auth(uniqueUser('alice'));
    const bob = t.auth(uniqueUser('bob'));
    const created = await request(server()).post(api('')).set(alice).send({ name: '  Finance handbooks  ', description: 'Budgets\nand rules' }).expect(201);
    expect(created.body).toMatchObject({ name: 'Finance handbooks', description: 'Budgets\nand rules', role: 'owner', document_count: 0 });
    expect(created.body.owner).toMatch(/^alice-/);
    const id = created.body.id as string;

    const listed = (headers: Headers) =>
      request(server())
        .get(api(''))
        .set(headers)
        .expect(200)
        .then((res) => res.body.collections.map((c: { id: string; role: string }) => [c.id, c.role]));
    expect(await listed(alice)).toEqual([
      [DEFAULT_COLLECTION_ID, 'viewer'],
      [id, 'owner'],
    ]);
    expect(await listed(bob)).toEqual([[DEFAULT_COLLECTION_ID, 'viewer']]);

    // Every route of a collection bob cannot read answers as for one that does not exist.
    const missing = '6f1c1d8e-0000-4000-8000-00000000abcd';
    for (const target of [id, id.toUpperCase(), missing]) {
      const answers = await Promise.all([
        request(server())
          .get(api(`/${target}`))
          .set(bob),
        request(server())
          .patch(api(`/${target}`))
          .set(bob)
          .send({ name: 'mine now' }),
        request(server())
          .delete(api(`/${target}`))
          .set(bob),
        request(server())
          .get(api(`/${target}/access`))
          .set(bob),
        request(server())
          .put(api(`/${target}/access`))
          .set(bob)
          .send({ entries: [{ principal: 'everyone', role: 'owner' }] }),
        request(server())
          .get(api(`/${target}/documents`))
          .set(bob),
        request(server())
          .post(api(`/${target}/documents`))
          .set(bob)
          .attach('file', Buffer.from(note('Bobs')), 'bob.md'),
        request(server())
          .delete(api(`/${target}/documents/${missing}`))
          .set(bob),
      ]);
      expect(answers.map((res) => [res.status, res.body.code])).toEqual(Array.from({ length: 8 }, () => [404, 'collection_not_found']));
    }
    // The owner reads it by its id in any case.
    expect(
      (
        await request(server())
          .get(api(`/${id.toUpperCase()}`))
          .set(alice)
          .expect(200)
      ).body.id,
    ).toBe(id);
  });

  it('gives viewers reading, editors documents, owners the rest; administrators everything', async () => {
    const [aliceId, bobId, carolId, daveId] = ['alice', 'bob', 'carol', 'dave'].map((name) => uniqueUser(name));
    const alice = t.auth(aliceId);
    const bob = t.auth(bobId);
    const carol = t.auth(carolId);
    const dave = groupAuth(t, daveId, ['finance']);
    const admin = adminAuth(t);
    const { id } = await createCollection(t, alice, 'Roles');
    await setAccess(t, alice, id, [
      { principal: `user:${aliceId}`, role: 'owner' },
      { principal: `user:${bobId}`, role: 'viewer' },
      { principal: `user:${carolId}`, role: 'editor' },
      { principal: 'group:finance', role: 'viewer' },
    ]);
    const role = async (headers: Headers) =>
      (
        await request(server())
          .get(api(`/${id}`))
          .set(headers)
          .expect(200)
      ).body.role;
    expect([await role(alice), await role(bob), await role(carol), await role(dave), await role(admin)]).toEqual(['owner', 'viewer', 'editor', 'viewer', 'owner']);

    // Editors add and delete documents; viewers read them.
    const documentId = await uploadTo(t, carol, id, 'roles.md', note('Ocelot'));
    const listed = await request(server())
      .get(api(`/${id}/documents`))
      .set(bob)
      .expect(200);
    expect(listed.body.documents.map((d: { id: string; collection_id: string }) => [d.id, d.collection_id])).toEqual([[documentId, id]]);
    expect(
      (
        await request(server())
          .get(api(`/${id}`))
          .set(dave)
          .expect(200)
      ).body.document_count,
    ).toBe(1);

    const forbidden = async (res: request.Test) => {
      const answer = await res;
      return [answer.status, answer.body.code];
    };
    const refused = [403, 'collection_forbidden'];
    expect(
      await forbidden(
        request(server())
          .post(api(`/${id}/documents`))
          .set(bob)
          .attach('file', Buffer.from(note('Bobcat')), 'bob.md'),
      ),
    ).toEqual(refused);
    expect(
      await forbidden(
        request(server())
          .delete(api(`/${id}/documents/${documentId}`))
          .set(dave),
      ),
    ).toEqual(refused);
    for (const headers of [bob, carol]) {
      expect(
        await forbidden(
          request(server())
            .patch(api(`/${id}`))
            .set(headers)
            .send({ name: 'Renamed' }),
        ),
      ).toEqual(refused);
      expect(
        await forbidden(
          request(server())
            .delete(api(`/${id}`))
            .set(headers),
        ),
      ).toEqual(refused);
      expect(
        await forbidden(
          request(server())
            .put(api(`/${id}/access`))
            .set(headers)
            .send({ entries: [{ principal: 'everyone', role: 'owner' }] }),
        ),
      ).toEqual(refused);
    }
    // Readers see the access list.
    const access = await request(server())
      .get(api(`/${id}/access`))
      .set(dave)
      .expect(200);
    expect(access.body).toEqual({
      collection_id: id,
      entries: [
        { principal: `user:${aliceId}`, role: 'owner' },
        { principal: `user:${carolId}`, role: 'editor' },
        { principal: 'group:finance', role: 'viewer' },
        { principal: `user:${bobId}`, role: 'viewer' },
      ],
    });
    // The job of an upload: its editors follow it; a reader may not, a stranger does not find it.
    const job = await request(server())
      .post(api(`/${id}/documents`))
      .set(carol)
      .attach('file', Buffer.from(note('Lynx')), 'lynx.md')
      .expect(202);
    expect(job.headers.location).toBe(`/api/knowledge/jobs/${job.body.job.id}`);
    expect(job.body.job.collection_id).toBe(id);
    await request(server()).get(job.headers.location).set(carol).expect(200);
    expect((await request(server()).get(job.headers.location).set(bob).expect(403)).body.code).toBe('collection_forbidden');
    expect(
      (
        await request(server())
          .get(job.headers.location)
          .set(t.auth(uniqueUser('eve')))
          .expect(404)
      ).body.code,
    ).toBe('ingest_job_not_found');

    await request(server())
      .delete(api(`/${id}/documents/${documentId}`))
      .set(carol)
      .expect(200);
    await request(server())
      .delete(api(`/${id}/documents/${documentId}`))
      .set(carol)
      .expect(404);
    // Administrators may do everything on every collection, and see every one.
    await request(server())
      .patch(api(`/${id}`))
      .set(admin)
      .send({ name: 'Renamed by an administrator' })
      .expect(200);
    const all = (await request(server()).get(api('?limit=1000')).set(admin).expect(200)).body.collections;
    expect(all.find((c: { id: string }) => c.id === id)).toMatchObject({ name: 'Renamed by an administrator', role: 'owner' });
  });

  it('lets an owner rename, hand over and delete, never leaving the collection without an owner', async () => {
    const [aliceId, bobId] = [uniqueUser('alice'), uniqueUser('bob')];
    const alice = t.auth(aliceId);
    const bob = t.auth(bobId);
    const { id } = await createCollection(t, alice, 'Handover');
    const renamed = await request(server())
      .patch(api(`/${id}`))
      .set(alice)
      .send({ name: 'Handed over', description: 'now bob’s' })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'Handed over', description: 'now bob’s' });
    await request(server())
      .patch(api(`/${id}`))
      .set(alice)
      .send({})
      .expect(400);

    const orphan = await request(server())
      .put(api(`/${id}/access`))
      .set(alice)
      .send({ entries: [{ principal: `user:${bobId}`, role: 'editor' }] })
      .expect(409);
    expect(orphan.body.code).toBe('collection_owner_required');
    // Handed over: alice no longer reads it (the answer still gives the list she wrote).
    const handed = await request(server())
      .put(api(`/${id}/access`))
      .set(alice)
      .send({ entries: [{ principal: `user:${bobId}`, role: 'owner' }] })
      .expect(200);
    expect(handed.body.entries).toEqual([{ principal: `user:${bobId}`, role: 'owner' }]);
    await request(server())
      .get(api(`/${id}`))
      .set(alice)
      .expect(404);
    const deleted = await request(server())
      .delete(api(`/${id}`))
      .set(bob)
      .expect(200);
    expect(deleted.body).toEqual({ id, documents_deleted: 0, jobs_cancelled: 0 });
    await request(server())
      .get(api(`/${id}`))
      .set(bob)
      .expect(404);
  });

  it('stores identical content once per collection, not once overall', async () => {
    const alice = t.auth(uniqueUser('alice'));
    const first = await createCollection(t, alice, 'First');
    const second = await createCollection(t, alice, 'Second');
    const text = note('Pangolin');
    const one = await uploadTo(t, alice, first.id, 'pangolin.md', text);
    const two = await uploadTo(t, alice, second.id, 'pangolin.md', text);
    expect(two).not.toBe(one);
    const again = await request(server())
      .post(api(`/${first.id}/documents`))
      .set(alice)
      .attach('file', Buffer.from(text), 'again.md')
      .expect(200);
    expect(again.body).toMatchObject({ duplicate: true, document: { id: one, collection_id: first.id } });
  });

  it('refuses hostile names, ids and access lists with a 4xx and a code', async () => {
    const aliceId = uniqueUser('alice');
    const alice = t.auth(aliceId);
    const { id } = await createCollection(t, alice, 'Hostile');
    const post = (body: unknown) => request(server()).post(api('')).set(alice).set('Content-Type', 'application/json').send(JSON.stringify(body));
    const raw = (json: string) => request(server()).post(api('')).set(alice).set('Content-Type', 'application/json').send(json);
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: '\u200b' }, { name: 'a'.repeat(101) }, { name: 'line\nbreak' }, { name: 42 }, { name: ['x'] }]) {
      expect([(await post(body)).status, body]).toEqual([400, body]);
    }
    expect((await post({ name: 'ok', description: 'd'.repeat(2001) })).status).toBe(400);
    expect((await post({ name: 'ok', owner: 'someone-else' })).status).toBe(400);
    expect((await raw('{"name": "nul\\u0000"}')).status).toBe(400);
    expect((await raw('{"name": "lone \\ud800 surrogate"}')).status).toBe(400);
    expect((await raw('{"name": "ok", "description": "lone \\udc00"}')).status).toBe(400);
    expect([413, 400]).toContain((await post({ name: 'x'.repeat(2_000_000) })).status);
    // A name of 100 characters of any script is fine.
    expect((await post({ name: '预'.repeat(100) })).status).toBe(201);

    for (const forged of ['not-a-uuid', '%00', '1%27%20OR%201=1', '..%2F..%2Fetc', 'DEFAULT', '00000000-0000-0000-0000-000000000000']) {
      const res = await request(server())
        .get(api(`/${forged}`))
        .set(alice);
      expect([forged, res.status, res.body.code]).toEqual([forged, 404, 'collection_not_found']);
    }
    expect(
      (
        await request(server())
          .get(api(`/${'a'.repeat(5000)}`))
          .set(alice)
      ).status,
    ).toBe(400);
    // Bytes that are no UTF-8 (a lone surrogate's encoding, a stray byte): refused, never a 500.
    for (const undecodable of ['%ED%A0%80', '%FF', '%C0%AF']) {
      const res = await request(server())
        .get(api(`/${undecodable}/documents`))
        .set(alice);
      expect([undecodable, [400, 404].includes(res.status), typeof res.body.code]).toEqual([undecodable, true, 'string']);
    }
    await request(server())
      .delete(api(`/${id}/documents/not-a-uuid`))
      .set(alice)
      .expect(400);
    await request(server()).get(api('?cursor=garbage')).set(alice).expect(400);
    await request(server()).get(api('?limit=0')).set(alice).expect(400);

    const put = (entries: unknown) =>
      request(server())
        .put(api(`/${id}/access`))
        .set(alice)
        .send({ entries });
    const owner = { principal: `user:${aliceId}`, role: 'owner' };
    const bad: unknown[] = [
      'everyone',
      [{ principal: 'alice', role: 'owner' }],
      [owner, { principal: 'user:', role: 'viewer' }],
      [owner, { principal: 'group:', role: 'viewer' }],
      [owner, { principal: 'group:a\u0000b', role: 'viewer' }],
      [owner, { principal: 'group:tab\there', role: 'viewer' }],
      [owner, { principal: 'Everyone', role: 'viewer' }],
      [owner, { principal: `group:${'g'.repeat(129)}`, role: 'viewer' }],
      [owner, { principal: 'everyone', role: 'admin' }],
      [owner, { principal: 'everyone' }],
      [owner, { principal: 'everyone', role: 'viewer', extra: true }],
      [owner, { ...owner, role: 'viewer' }],
      Array.from({ length: 201 }, (_, i) => ({ principal: `user:u${i}`, role: 'owner' })),
    ];
    for (const entries of bad) {
      const res = await put(entries);
      expect([res.status, res.body.code]).toEqual([400, 'invalid_request']);
    }
    // Group names and user ids of any script, compared exactly.
    await put([owner, { principal: 'group:财务', role: 'viewer' }, { principal: 'group:/org/Finance Team', role: 'editor' }]).expect(200);
    await request(server())
      .get(api(`/${id}`))
      .set(groupAuth(t, uniqueUser(), ['财务']))
      .expect(200);
    await request(server())
      .get(api(`/${id}`))
      .set(groupAuth(t, uniqueUser(), ['/org/finance team']))
      .expect(404);
  });

  it('limits how many collections one user owns', async () => {
    const alice = t.auth(uniqueUser('prolific'));
    const created = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(server())
          .post(api(''))
          .set(alice)
          .send({ name: `c${i}` }),
      ),
    );
    expect(created.every((res) => res.status === 201)).toBe(true);
    const over = await request(server()).post(api('')).set(alice).send({ name: 'one more' }).expect(409);
    expect(over.body.code).toBe('collection_limit');
    // Pages of the listing follow on, each collection once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await request(server())
        .get(api(`?limit=30${cursor ? `&cursor=${cursor}` : ''}`))
        .set(alice)
        .expect(200);
      seen.push(...res.body.collections.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(101);
    expect(new Set(seen).size).toBe(101);
  });
});

describe('Knowledge collections with KNOWLEDGE_COLLECTION_CREATORS=admins', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ KNOWLEDGE_COLLECTION_CREATORS: 'admins' });
  });
  afterAll(() => t.close());

  it('lets only administrators create collections', async () => {
    const refused = await request(t.app.getHttpServer()).post('/api/knowledge/collections').set(t.auth(uniqueUser())).send({ name: 'Mine' }).expect(403);
    expect(refused.body.code).toBe('collection_creation_forbidden');
    const created = await request(t.app.getHttpServer()).post('/api/knowledge/collections').set(adminAuth(t)).send({ name: 'Team' }).expect(201);
    expect(created.body.role).toBe('owner');
  });
});
