import { JwtService } from '@nestjs/jwt';
import request from 'supertest';
import { MintTokenError, mintToken } from '../scripts/mint-token.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { TEST_JWT_SECRET } from './support/test-env.js';

/** `npm run token` mints only tokens the service accepts: within JWT_MAX_LIFETIME_SECONDS, for a valid user id. */
describe('mint-token script', () => {
  const env = { JWT_SECRET: TEST_JWT_SECRET, JWT_MAX_LIFETIME_SECONDS: '3600' };
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ JWT_MAX_LIFETIME_SECONDS: '3600' });
  });
  afterAll(() => t.close());

  const lifetime = (token: string) => {
    const claims = new JwtService({ secret: TEST_JWT_SECRET }).verify<{ exp: number; iat: number }>(token);
    return claims.exp - claims.iat;
  };
  const sessions = (token: string) => request(t.app.getHttpServer()).get('/api/sessions').set('Authorization', `Bearer ${token}`);

  it('refuses an --expires-in above the configured maximum, saying why', () => {
    expect(() => mintToken([uniqueUser(), '--expires-in', '2h'], env)).toThrow(MintTokenError);
    expect(() => mintToken([uniqueUser(), '--expires-in', '2h'], env)).toThrow(
      /--expires-in 2h is 7200 seconds, above the maximum token lifetime of 3600 seconds \(JWT_MAX_LIFETIME_SECONDS\)/,
    );
    // The default maximum is one day.
    expect(() => mintToken([uniqueUser(), '--expires-in', '2d'], { JWT_SECRET: TEST_JWT_SECRET })).toThrow(/maximum token lifetime of 86400 seconds/);
  });

  it('mints tokens within the maximum that the service accepts', async () => {
    const { token } = mintToken([uniqueUser(), '--expires-in', '30m'], env);
    expect(lifetime(token)).toBe(1800);
    await sessions(token).expect(200);

    const atMax = mintToken([uniqueUser(), '--admin', '--expires-in', '1h'], env);
    expect(lifetime(atMax.token)).toBe(3600);
    await sessions(atMax.token).expect(200);
  });

  it('caps the 12 h default at the maximum, with a note', async () => {
    const capped = mintToken([uniqueUser()], env);
    expect(lifetime(capped.token)).toBe(3600);
    expect(capped.notes.join('\n')).toMatch(/3600 seconds \(JWT_MAX_LIFETIME_SECONDS\)/);
    await sessions(capped.token).expect(200);
    expect(lifetime(mintToken([uniqueUser()], { JWT_SECRET: TEST_JWT_SECRET }).token)).toBe(12 * 3600);
  });

  it('reads a bare number as seconds (not milliseconds)', () => {
    expect(lifetime(mintToken([uniqueUser(), '--expires-in', '600'], env).token)).toBe(600);
  });

  it.each([['soon'], ['0'], ['-5m'], ['']])('refuses --expires-in %p', (value) => {
    expect(() => mintToken([uniqueUser(), '--expires-in', value], env)).toThrow(/--expires-in/);
  });

  it('refuses a user id the service would refuse', () => {
    expect(() => mintToken(['bob\ud800'], env)).toThrow(/user id .*surrogate/);
    expect(() => mintToken(['   '], env)).toThrow(/user id .*visible/);
    expect(() => mintToken(['x'.repeat(129)], env)).toThrow(/user id .*128/);
    expect(() => mintToken([], env)).toThrow(/usage/);
  });

  it('refuses an invalid configuration, naming the variable', () => {
    expect(() => mintToken([uniqueUser()], { JWT_MAX_LIFETIME_SECONDS: 'forever' })).toThrow(/JWT_MAX_LIFETIME_SECONDS/);
  });
});
