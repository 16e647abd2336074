import { RequestError } from '../common/coded-error.js';

/**
 * A token must expire and live at most `maxSeconds`: from `iat` when
 * present, from now otherwise; an `iat` in the future counts from now, so it
 * cannot stretch the lifetime. The same rule for HS256 and identity-provider
 * tokens (the JWT libraries have already refused a past `exp`).
 */
export function checkTokenLifetime(claims: { exp?: unknown; iat?: unknown }, maxSeconds: number): void {
  if (typeof claims.exp !== 'number') throw new RequestError('unauthorized', 'Token must carry an expiry (exp)');
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat))) {
    throw new RequestError('unauthorized', 'Invalid token: "iat" must be a number of seconds since the epoch');
  }
  const now = Math.floor(Date.now() / 1000);
  const issuedAt = claims.iat === undefined ? now : Math.min(claims.iat as number, now);
  if (claims.exp - issuedAt > maxSeconds) {
    throw new RequestError('unauthorized', `Token lifetime exceeds the maximum of ${maxSeconds} seconds (exp is too far after iat, or after now): use a shorter-lived token`);
  }
}
