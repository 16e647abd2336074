import request from 'supertest';
import { CollectionAccess } from '../src/knowledge/public-api.js';
import { createCollection, groupAuth, Headers, setAccess } from './support/collections.js';
import { generateSigningKey, JwksServer, signToken, SigningKey } from './support/jwks-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const bearer = (token: string): Headers => ({ Authorization: `Bearer ${token}` });

/** Issue 23, items 3 and 4: groups from every kind of credential, and access decisions read afresh on every request. */
describe('Collection access by user and group', () => {
  let t: TestApp;
  /** A second instance on the same database and Redis. */
  let other: TestApp;
  const get = (app: TestApp, id: string, headers: Headers) => request(app.app.getHttpServer()).get(`/api/knowledge/collections/${id}`).set(headers);

  beforeAll(async () => {
    t = await createTestApp();
    other = await createTestApp();
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  /** A collection of a new user shared with group:finance as viewer; returns its id and its owner's header. */
  const financeCollection = async () => {
    const ownerId = uniqueUser('alice');
    const owner = t.auth(ownerId);
    const { id } = await createCollection(t, owner, 'Finance');
    await setAccess(t, owner, id, [
      { principal: `user:${ownerId}`, role: 'owner' },
      { principal: 'group:finance', role: 'viewer' },
    ]);
    return { id, owner, ownerId };
  };

  it('reads the groups of an HS256 token from its groups claim, compared exactly', async () => {
    const { id } = await financeCollection();
    expect((await get(t, id, groupAuth(t, uniqueUser('carol'), ['staff', 'finance'])).expect(200)).body.role).toBe('viewer');
    await get(t, id, t.auth(uniqueUser('carol'), { groups: 'finance' })).expect(200);
    for (const groups of [['Finance'], ['finance '], ['staff'], []]) await get(t, id, groupAuth(t, uniqueUser('bob'), groups)).expect(404);
    await get(t, id, t.auth(uniqueUser('bob'))).expect(404);
  });

  it('refuses a token whose groups claim breaks the rules of a user id', async () => {
    const { id } = await financeCollection();
    const claims: unknown[] = [[''], ['fin\u0000ance'], ['fin\ud800'], ['line\nbreak'], ['\u200b'], ['g'.repeat(129)], 42, { finance: true }, [['finance']]];
    claims.push(Array.from({ length: 257 }, (_, i) => `g${i}`));
    for (const groups of claims) {
      const res = await get(t, id, t.auth(uniqueUser('mallory'), { groups }));
      expect([res.status, res.body.code, res.body.message]).toEqual([401, 'unauthorized', expect.stringMatching(/groups claim/)]);
    }
  });

  it('gives an API key the groups of the token that created it', async () => {
    const { id } = await financeCollection();
    const carolId = uniqueUser('carol');
    const created = await request(t.app.getHttpServer())
      .post('/api/keys')
      .set(groupAuth(t, carolId, ['finance']))
      .send({ name: 'reports' })
      .expect(201);
    const [row] = await t.dataSource.query('SELECT groups FROM api_keys WHERE id = $1', [created.body.id]);
    expect(row.groups).toEqual(['finance']);
    expect((await get(t, id, bearer(created.body.key)).expect(200)).body.role).toBe('viewer');
    // A key of the same user created by a token without the group does not carry it.
    const plain = await request(t.app.getHttpServer()).post('/api/keys').set(t.auth(carolId)).send({ name: 'plain' }).expect(201);
    await get(t, id, bearer(plain.body.key)).expect(404);
  });

  it('applies a removed share on the next request on another instance', async () => {
    const { id, owner, ownerId } = await financeCollection();
    const carolId = uniqueUser('carol');
    const carol = groupAuth(other, carolId, ['finance']);
    const access = other.app.get(CollectionAccess);
    const carolUser = { userId: carolId, isAdmin: false, groups: ['finance'] };
    await get(other, id, carol).expect(200);
    expect(await access.roleOf(carolUser, id)).toBe('viewer');
    expect(await access.readableCollectionIds(carolUser)).toContain(id);

    await setAccess(t, owner, id, [{ principal: `user:${ownerId}`, role: 'owner' }]);
    expect((await get(other, id, carol).expect(404)).body.code).toBe('collection_not_found');
    expect(await access.roleOf(carolUser, id)).toBeNull();
    expect(await access.readableCollectionIds(carolUser)).not.toContain(id);
    await expect(access.requireReadable(carolUser, [id])).rejects.toMatchObject({ code: 'collection_not_found' });

    // And a share given on one instance holds on the other at once.
    await setAccess(t, owner, id, [
      { principal: `user:${ownerId}`, role: 'owner' },
      { principal: `user:${carolId}`, role: 'editor' },
    ]);
    expect((await get(other, id, carol).expect(200)).body.role).toBe('editor');
  });

  it('gives administrators every collection, or with adminOverride false only their own entries', async () => {
    const { id } = await financeCollection();
    const access = t.app.get(CollectionAccess);
    const admin = { userId: uniqueUser('admin'), isAdmin: true, groups: [] };
    expect(await access.roleOf(admin, id)).toBe('owner');
    expect(await access.readableCollectionIds(admin)).toContain(id);
    expect(await access.readableCollectionIds(admin, { adminOverride: false })).not.toContain(id);
    expect(await access.roleOf(admin, 'not-a-collection')).toBeNull();
  });
});

describe('Groups at another claim path (JWT_GROUPS_CLAIM), from HS256 and identity-provider tokens', () => {
  const ISSUER = 'https://idp.example.test/realms/rag';
  const AUDIENCE = 'rag-chat';
  let rsa: SigningKey;
  let jwks: JwksServer;
  let t: TestApp;

  beforeAll(async () => {
    rsa = await generateSigningKey('rsa-groups', 'RS256');
    jwks = await JwksServer.start([rsa]);
    t = await createTestApp({
      JWT_JWKS_URL: jwks.url,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      JWT_ROLE_CLAIM: 'realm_access.roles',
      JWT_GROUPS_CLAIM: 'realm_access.groups',
      JWT_MAX_LIFETIME_SECONDS: '3600',
    });
  });
  afterAll(async () => {
    await t?.close();
    await jwks?.stop();
  });

  it('reads realm_access.groups of both, and nothing else', async () => {
    const ownerId = uniqueUser('alice');
    const owner = t.auth(ownerId);
    const { id } = await createCollection(t, owner, 'Realm');
    await setAccess(t, owner, id, [
      { principal: `user:${ownerId}`, role: 'owner' },
      { principal: 'group:finance', role: 'viewer' },
    ]);
    const get = (headers: Headers) => request(t.app.getHttpServer()).get(`/api/knowledge/collections/${id}`).set(headers);
    const idp = (claims: Record<string, unknown>) => signToken(rsa, { sub: uniqueUser('idp'), iss: ISSUER, aud: AUDIENCE, ...claims });

    await get(bearer(await idp({ realm_access: { roles: [], groups: ['finance'] } }))).expect(200);
    await get(bearer(await idp({ realm_access: { groups: 'finance' } }))).expect(200);
    await get(bearer(await idp({ groups: ['finance'] }))).expect(404);
    await get(bearer(await idp({}))).expect(404);
    expect((await get(bearer(await idp({ realm_access: { groups: ['fin\u0000'] } }))).expect(401)).body.message).toMatch(/groups claim "realm_access.groups"/);

    await get(t.auth(uniqueUser('carol'), { realm_access: { groups: ['finance'] } })).expect(200);
    await get(t.auth(uniqueUser('carol'), { groups: ['finance'] })).expect(404);
    // A claim named exactly like the path wins over the path, as for the role claim.
    await get(t.auth(uniqueUser('carol'), { 'realm_access.groups': ['finance'] })).expect(200);
  });
});

describe('Development tokens with groups (NODE_ENV=development, no JWT_SECRET)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ NODE_ENV: 'development', JWT_SECRET: '', JWT_GROUPS_CLAIM: 'org.groups' });
  });
  afterAll(() => t.close());

  it('mints a token naming the groups asked for, where the guard reads them', async () => {
    const ownerId = uniqueUser('alice');
    const owner = t.auth(ownerId);
    const { id } = await createCollection(t, owner, 'Dev');
    await setAccess(t, owner, id, [
      { principal: `user:${ownerId}`, role: 'owner' },
      { principal: 'group:财务', role: 'editor' },
    ]);
    const minted = await request(t.app.getHttpServer())
      .post('/api/dev/token')
      .send({ sub: uniqueUser('carol'), groups: ['财务', '财务', 'staff'] })
      .expect(200);
    const read = await request(t.app.getHttpServer()).get(`/api/knowledge/collections/${id}`).set(bearer(minted.body.token)).expect(200);
    expect(read.body.role).toBe('editor');
    const payload = JSON.parse(Buffer.from(minted.body.token.split('.')[1], 'base64url').toString('utf8'));
    expect(payload.org).toEqual({ groups: ['财务', 'staff'] });
  });

  it('refuses groups that are not group names', async () => {
    for (const groups of ['finance', [''], ['a\u0000'], ['tab\t'], [7], Array.from({ length: 257 }, (_, i) => `g${i}`), ['g'.repeat(129)]]) {
      const res = await request(t.app.getHttpServer()).post('/api/dev/token').send({ sub: 'carol', groups });
      expect([res.status, res.body.code]).toEqual([400, 'invalid_request']);
    }
  });
});
