import { RequestError } from '../common/coded-error.js';
import { loadConfig } from '../config/app-config.js';
import { claimAt, hasRole, IdentityTokenVerifier } from './identity-token.verifier.js';

describe('role claim lookup', () => {
  it('walks a dot path', () => {
    expect(claimAt({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(claimAt({ resource_access: { 'rag-chat': { roles: ['x'] } } }, 'resource_access.rag-chat.roles')).toEqual(['x']);
    expect(claimAt({ role: 'admin' }, 'role')).toBe('admin');
  });

  it('takes a claim named with dots (namespaced, Auth0 style) as it is', () => {
    expect(claimAt({ 'https://rag.example.com/roles': ['admin'] }, 'https://rag.example.com/roles')).toEqual(['admin']);
  });

  it('finds nothing through missing, non-object or inherited steps', () => {
    expect(claimAt({}, 'realm_access.roles')).toBeUndefined();
    expect(claimAt({ realm_access: 'admin' }, 'realm_access.roles')).toBeUndefined();
    expect(claimAt({ realm_access: ['admin'] }, 'realm_access.0')).toBeUndefined();
    expect(claimAt({ realm_access: {} }, 'realm_access.constructor')).toBeUndefined();
    expect(claimAt({}, '__proto__')).toBeUndefined();
  });

  it('matches a string exactly or an array of strings containing the role', () => {
    expect(hasRole('admin', 'admin')).toBe(true);
    expect(hasRole(['user', 'admin'], 'admin')).toBe(true);
    expect(hasRole('administrator', 'admin')).toBe(false);
    expect(hasRole(['Admin'], 'admin')).toBe(false);
    expect(hasRole([['admin']], 'admin')).toBe(false);
    expect(hasRole({ admin: true }, 'admin')).toBe(false);
    expect(hasRole(undefined, 'admin')).toBe(false);
  });
});

describe('identity-provider configuration', () => {
  const base = { JWT_JWKS_URL: 'https://idp.example.com/realms/rag/protocol/openid-connect/certs', JWT_ISSUER: 'https://idp.example.com/realms/rag', JWT_AUDIENCE: 'rag-chat' };

  it('is off without JWT_JWKS_URL', () => {
    expect(loadConfig({}).auth.identityProvider).toBeUndefined();
  });

  it('reads every setting, the audience as a comma list', () => {
    expect(
      loadConfig({
        ...base,
        JWT_AUDIENCE: ' rag-chat, account ,',
        JWT_ROLE_CLAIM: 'realm_access.roles',
        JWT_ADMIN_ROLE: 'rag-admin',
        JWT_JWKS_TIMEOUT_MS: '2000',
        JWT_JWKS_COOLDOWN_MS: '0',
      }).auth.identityProvider,
    ).toEqual({
      jwksUrl: base.JWT_JWKS_URL,
      issuer: base.JWT_ISSUER,
      audience: ['rag-chat', 'account'],
      roleClaim: 'realm_access.roles',
      adminRole: 'rag-admin',
      timeoutMs: 2000,
      cooldownMs: 0,
    });
    expect(loadConfig(base).auth.identityProvider).toMatchObject({ roleClaim: 'role', adminRole: 'admin', timeoutMs: 5000, cooldownMs: 30000 });
  });

  it('requires the issuer and the audience with a JWKS URL', () => {
    expect(() => loadConfig({ JWT_JWKS_URL: base.JWT_JWKS_URL })).toThrow(/JWT_ISSUER: required when JWT_JWKS_URL is set[^\n]*\nJWT_AUDIENCE: required when JWT_JWKS_URL is set/);
    expect(() => loadConfig({ ...base, JWT_AUDIENCE: ' , ' })).toThrow(/JWT_AUDIENCE: must name at least one audience/);
  });

  it('refuses a plain-http JWKS URL in production, except on loopback', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'a-real-production-secret' };
    expect(() => loadConfig({ ...production, ...base, JWT_JWKS_URL: 'http://idp.example.com/certs' })).toThrow(/JWT_JWKS_URL: must be an https:\/\/ URL/);
    expect(loadConfig({ ...production, ...base, JWT_JWKS_URL: 'http://127.0.0.1:8080/certs' }).auth.identityProvider?.jwksUrl).toBe('http://127.0.0.1:8080/certs');
    expect(loadConfig({ ...production, ...base }).auth.identityProvider?.jwksUrl).toBe(base.JWT_JWKS_URL);
    expect(() => loadConfig({ ...base, JWT_JWKS_URL: 'idp.example.com/certs' })).toThrow(/JWT_JWKS_URL: must be an http\(s\) URL/);
  });
});

describe('IdentityTokenVerifier.handles', () => {
  const verifier = new IdentityTokenVerifier(loadConfig({}));
  const header = (value: object) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.e30.c2ln`;

  it('leaves HS256 tokens and non-JWS text to the HS256 path', () => {
    expect(verifier.handles(header({ alg: 'HS256', typ: 'JWT' }))).toBe(false);
    expect(verifier.handles('not-a-token')).toBe(false);
    expect(verifier.handles('rk-abc.def.ghi')).toBe(false);
  });

  it('takes every other algorithm, to accept or refuse it itself', () => {
    for (const alg of ['RS256', 'ES256', 'none', 'HS512', 'PS256']) expect(verifier.handles(header({ alg }))).toBe(true);
  });
});

describe('IdentityTokenVerifier.verify without an identity provider', () => {
  const verifier = new IdentityTokenVerifier(loadConfig({}));
  const token = (header: object) => `${Buffer.from(JSON.stringify(header)).toString('base64url')}.e30.c2ln`;

  it('answers 401 for text that is not a JWS, an unaccepted algorithm, and RS256 without JWT_JWKS_URL', async () => {
    await expect(verifier.verify('garbage')).rejects.toThrow(RequestError);
    await expect(verifier.verify(token({ alg: { nested: true } }))).rejects.toThrow(/algorithm \{"nested":true\} is not accepted/);
    await expect(verifier.verify(token({ alg: 'ES256' }))).rejects.toThrow(/ES256 tokens are not accepted here .*JWT_JWKS_URL is unset/);
  });
});
