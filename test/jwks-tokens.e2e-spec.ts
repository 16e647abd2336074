import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import request from 'supertest';
import { generateSigningKey, JwksServer, signToken, SigningKey } from './support/jwks-server.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

const ISSUER = 'https://idp.example.test/realms/rag';
const AUDIENCE = 'rag-chat';

function idpEnv(jwks: JwksServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    JWT_JWKS_URL: jwks.url,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: `other-api, ${AUDIENCE}`,
    JWT_ROLE_CLAIM: 'realm_access.roles',
    JWT_MAX_LIFETIME_SECONDS: '3600',
    ...extra,
  };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** RS256/ES256 tokens of an identity provider, verified against a local JWKS server. */
describe('identity-provider tokens (JWKS)', () => {
  describe('with a reachable identity provider', () => {
    let rsa: SigningKey;
    let ec: SigningKey;
    let jwks: JwksServer;
    let t: TestApp;

    beforeAll(async () => {
      rsa = await generateSigningKey('rsa-1', 'RS256');
      ec = await generateSigningKey('ec-1', 'ES256');
      jwks = await JwksServer.start([rsa, ec]);
      // Cooldown 0: a rotated key is fetched on its first token (the cooldown itself is tested below).
      t = await createTestApp(idpEnv(jwks, { JWT_JWKS_COOLDOWN_MS: '0' }));
    });
    afterAll(async () => {
      await t?.close();
      await jwks?.stop();
    });

    const server = () => t.app.getHttpServer();
    const claims = (sub: string, extra: Record<string, unknown> = {}) => ({ sub, iss: ISSUER, aud: AUDIENCE, ...extra });
    const sessions = (token: string) => request(server()).get('/api/sessions').set(bearer(token));
    const deleteDocument = (token: string) => request(server()).delete(`/api/knowledge/documents/${randomUUID()}`).set(bearer(token));

    it('accepts an RS256 token: its sub is the user', async () => {
      const user = uniqueUser('idp');
      const sessionId = randomUUID();
      await t.storage.openSession(user, sessionId, 'from the identity provider');
      const res = await sessions(await signToken(rsa, claims(user))).expect(200);
      expect(res.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sessionId]);
      // Another subject of the same provider does not see it.
      const other = await sessions(await signToken(rsa, claims(uniqueUser('idp')))).expect(200);
      expect(other.body.sessions).toEqual([]);
    });

    it('accepts an ES256 token', async () => {
      const user = uniqueUser('idp-ec');
      const sessionId = randomUUID();
      await t.storage.openSession(user, sessionId, 'ec');
      const res = await sessions(await signToken(ec, claims(user))).expect(200);
      expect(res.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([sessionId]);
    });

    it('keeps accepting the service’s own HS256 tokens', async () => {
      await request(server()).get('/api/sessions').set(t.auth(uniqueUser())).expect(200);
    });

    it.each([
      ['a wrong audience', { aud: 'someone-else' }, /audience \(aud\) not accepted/],
      ['no audience', { aud: undefined }, /audience \(aud\) not accepted/],
      ['a wrong issuer', { iss: 'https://evil.example.test/' }, /issuer \(iss\) not accepted/],
      ['no issuer', { iss: undefined }, /issuer \(iss\) not accepted/],
      ['an invalid sub', { sub: 'bob\u0000' }, /"sub" /],
      ['no sub', { sub: undefined }, /"sub" must name the user/],
    ])('refuses a token with %s (401)', async (_name, override, message) => {
      const res = await sessions(await signToken(rsa, { ...claims(uniqueUser()), ...override })).expect(401);
      expect(res.body.message).toMatch(message);
    });

    it('refuses an expired token, one without exp and one living longer than JWT_MAX_LIFETIME_SECONDS', async () => {
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT(claims(uniqueUser()))
        .setProtectedHeader({ alg: 'RS256', kid: rsa.kid })
        .setIssuedAt(now - 600)
        .setExpirationTime(now - 60)
        .sign(rsa.privateKey);
      expect((await sessions(expired).expect(401)).body.message).toBe('Token expired');
      const forever = await signToken(rsa, claims(uniqueUser()), { expiresIn: null });
      expect((await sessions(forever).expect(401)).body.message).toMatch(/must carry an expiry \(exp\)/);
      const tooLong = await signToken(rsa, claims(uniqueUser()), { expiresIn: '2h' });
      expect((await sessions(tooLong).expect(401)).body.message).toMatch(/lifetime exceeds the maximum of 3600 seconds/);
    });

    it('refuses a token issued in the future (iat a year ahead), accepts one within the clock skew', async () => {
      const now = Math.floor(Date.now() / 1000);
      const future = (iat: number) =>
        new SignJWT(claims(uniqueUser()))
          .setProtectedHeader({ alg: 'RS256', kid: rsa.kid })
          .setIssuedAt(iat)
          .setExpirationTime(now + 600)
          .sign(rsa.privateKey);
      const res = await sessions(await future(now + 365 * 86400)).expect(401);
      expect(res.body.message).toBe('Invalid token: it was issued in the future ("iat" is more than 60 seconds ahead of this server\'s clock)');
      await sessions(await future(now + 30)).expect(200);
    });

    it('refuses alg none, HS512 and PS256 tokens, and a tampered payload', async () => {
      const unsecured = new UnsecuredJWT(claims(uniqueUser())).setIssuedAt().setExpirationTime('5m').encode();
      expect((await sessions(unsecured).expect(401)).body.message).toMatch(/algorithm "none" is not accepted/);
      const hs512 = await new SignJWT(claims(uniqueUser()))
        .setProtectedHeader({ alg: 'HS512' })
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode('x'.repeat(64)));
      expect((await sessions(hs512).expect(401)).body.message).toMatch(/algorithm "HS512" is not accepted/);
      // WebCrypto will not sign PS256 with an RS256 key: a relabelled header is enough to test the refusal.
      const ps256 = withHeader(await signToken(rsa, claims(uniqueUser())), { alg: 'PS256', kid: rsa.kid });
      expect((await sessions(ps256).expect(401)).body.message).toMatch(/algorithm "PS256" is not accepted/);
      const [header, , signature] = (await signToken(rsa, claims(uniqueUser()))).split('.');
      const forged = Buffer.from(JSON.stringify({ ...claims(uniqueUser()), exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url');
      expect((await sessions(`${header}.${forged}.${signature}`).expect(401)).body.message).toBe('Invalid token: signature or format rejected');
    });

    it('makes admin a token whose realm_access.roles contains admin, and only that one', async () => {
      const admin = await signToken(rsa, claims(uniqueUser('idp-admin'), { realm_access: { roles: ['offline_access', 'admin'] } }));
      // Past the admin check: the document does not exist.
      await deleteDocument(admin).expect(404);
      const user = await signToken(rsa, claims(uniqueUser(), { realm_access: { roles: ['offline_access'] } }));
      expect((await deleteDocument(user).expect(403)).body.message).toMatch(/administrators/);
      // The HS256 role claim means nothing to an identity-provider token configured with another claim path.
      const topLevelRole = await signToken(rsa, claims(uniqueUser(), { role: 'admin' }));
      await deleteDocument(topLevelRole).expect(403);
      const stringRole = await signToken(rsa, claims(uniqueUser(), { realm_access: { roles: 'admin' } }));
      await deleteDocument(stringRole).expect(404);
    });

    it('accepts a rotated key after one refetch, and refuses a dropped one', async () => {
      await sessions(await signToken(rsa, claims(uniqueUser()))).expect(200);
      const before = jwks.fetches;
      const rotated = await generateSigningKey('rsa-2', 'RS256');
      jwks.addKey(rotated);
      jwks.removeKey(rsa.kid);
      await sessions(await signToken(rotated, claims(uniqueUser()))).expect(200);
      expect(jwks.fetches).toBe(before + 1);
      // Cached now: no further fetch.
      await sessions(await signToken(rotated, claims(uniqueUser()))).expect(200);
      expect(jwks.fetches).toBe(before + 1);
      // The old key is gone from the fetched set.
      const res = await sessions(await signToken(rsa, claims(uniqueUser()))).expect(401);
      expect(res.body.message).toMatch(/no key of the identity provider matches its "kid"/);
      jwks.addKey(rsa);
    });
  });

  describe('unknown kid with the default-like cooldown', () => {
    let key: SigningKey;
    let jwks: JwksServer;
    let t: TestApp;

    beforeAll(async () => {
      key = await generateSigningKey('known', 'ES256');
      jwks = await JwksServer.start([key]);
      t = await createTestApp(idpEnv(jwks, { JWT_JWKS_COOLDOWN_MS: '60000' }));
    });
    afterAll(async () => {
      await t?.close();
      await jwks?.stop();
    });

    it('refuses a kid the provider does not have, without a refetch per token', async () => {
      const sessions = (token: string) => request(t.app.getHttpServer()).get('/api/sessions').set(bearer(token));
      await sessions(await signToken(key, { sub: uniqueUser(), iss: ISSUER, aud: AUDIENCE })).expect(200);
      expect(jwks.fetches).toBe(1);
      const stranger = await generateSigningKey('unknown', 'ES256');
      for (let i = 0; i < 5; i += 1) {
        const res = await sessions(await signToken(stranger, { sub: uniqueUser(), iss: ISSUER, aud: AUDIENCE })).expect(401);
        expect(res.body.message).toMatch(/no key of the identity provider matches its "kid"/);
      }
      // Within the cooldown after the first fetch: none of the five fetched again.
      expect(jwks.fetches).toBe(1);
    });
  });

  describe('with an identity provider that fails', () => {
    let key: SigningKey;
    let jwks: JwksServer;
    let t: TestApp;

    beforeAll(async () => {
      key = await generateSigningKey('k1', 'RS256');
      jwks = await JwksServer.start([key]);
      t = await createTestApp(idpEnv(jwks, { JWT_JWKS_TIMEOUT_MS: '300', JWT_JWKS_COOLDOWN_MS: '0' }));
    });
    afterAll(async () => {
      await t?.close();
      await jwks?.stop();
    });

    const sessions = (headers: Record<string, string>) => request(t.app.getHttpServer()).get('/api/sessions').set(headers);
    const idpToken = () => signToken(key, { sub: uniqueUser(), iss: ISSUER, aud: AUDIENCE });

    it.each([
      ['times out', 'hang', /timed out/],
      ['answers something that is not JSON', 'garbage', /an error or not JSON/],
      ['answers JSON that is not a key set', 'not-jwks', /invalid key set/],
      ['answers 500', 'error', /answered an error/],
    ] as const)('answers 503 identity_provider_unavailable when the JWKS endpoint %s; HS256 keeps working', async (_name, mode, reason) => {
      jwks.mode = mode;
      const fetchesBefore = jwks.fetches;
      const res = await sessions(bearer(await idpToken())).expect(503);
      expect(res.body).toMatchObject({ code: 'identity_provider_unavailable' });
      expect(res.body.message).toMatch(reason);
      expect(res.body.message).not.toMatch(/JSON Web Key Set|ERR_|fetch failed/);
      expect(jwks.fetches).toBe(fetchesBefore + 1);
      await sessions(t.auth(uniqueUser())).expect(200);
    });

    it('verifies again once the endpoint answers, and keeps the keys it has while the endpoint is gone', async () => {
      jwks.mode = 'ok';
      await sessions(bearer(await idpToken())).expect(200);
      await jwks.stop();
      // Fetched keys are cached: the outage only shows for a key the service has not seen.
      await sessions(bearer(await idpToken())).expect(200);
      const unseen = await generateSigningKey('k2', 'RS256');
      const res = await sessions(bearer(await signToken(unseen, { sub: uniqueUser(), iss: ISSUER, aud: AUDIENCE }))).expect(503);
      expect(res.body).toMatchObject({ code: 'identity_provider_unavailable', message: expect.stringMatching(/unreachable/) });
      await sessions(t.auth(uniqueUser())).expect(200);
    });
  });

  describe('without JWT_JWKS_URL', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t?.close());

    it('refuses RS256 tokens, saying no identity provider is configured', async () => {
      const key = await generateSigningKey('k', 'RS256');
      const res = await request(t.app.getHttpServer())
        .get('/api/sessions')
        .set(bearer(await signToken(key, { sub: uniqueUser(), iss: ISSUER, aud: AUDIENCE })))
        .expect(401);
      expect(res.body.message).toMatch(/no identity provider is configured: JWT_JWKS_URL is unset/);
    });
  });
});

/** The token with its header replaced (its signature no longer matches). */
function withHeader(token: string, header: Record<string, unknown>): string {
  const [, payload, signature] = token.split('.');
  return `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${payload}.${signature}`;
}
