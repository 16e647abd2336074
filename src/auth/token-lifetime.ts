import { RequestError } from '../common/coded-error.js';

/**
 * How far ahead of this server's clock a token's `iat` may lie: the issuer's
 * clock may run a little fast. Neither JWT library checks `iat` on its own
 * (jsonwebtoken never; jose only with `maxTokenAge`, which would require an
 * `iat`, and tokens without one are accepted here).
 */
export const ISSUED_AT_SKEW_SECONDS = 60;

/**
 * A token must expire and live at most `maxSeconds`: from `iat` when
 * present, from now otherwise; an `iat` in the future counts from now, so it
 * cannot stretch the lifetime, and one more than ISSUED_AT_SKEW_SECONDS ahead
 * is refused (a token issued in the future). The same rule for HS256 and
 * identity-provider tokens (the JWT libraries have already refused a past `exp`).
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
  if (claims.iat !== undefined && (claims.iat as number) > now + ISSUED_AT_SKEW_SECONDS) {
    throw new RequestError('unauthorized', `Invalid token: it was issued in the future ("iat" is more than ${ISSUED_AT_SKEW_SECONDS} seconds ahead of this server's clock)`);
  }
}
