import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  JWTPayload,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type RemoteJWKSet,
} from 'jose';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { CodedError, RequestError } from '../common/coded-error.js';
import { AuthUser } from './auth-user.js';
import { groupsOfClaim } from './groups.js';
import { checkTokenLifetime } from './token-lifetime.js';
import { userIdProblem } from './user-id.js';

/** The asymmetric algorithms identity providers sign with that this service verifies against JWT_JWKS_URL. */
export const IDENTITY_PROVIDER_ALGORITHMS = ['RS256', 'ES256'] as const;

/** The identity provider's key set could not be fetched: the token may be fine, so not a 401. */
export class IdentityProviderUnavailableError extends CodedError {
  readonly code = 'identity_provider_unavailable';

  constructor(reason: string) {
    super(`Identity provider keys unavailable (${reason}); retry shortly`);
  }
}

/** A short reason for the client; the library's own text goes to the log only. */
function unavailableReason(error: unknown): string {
  if (error instanceof errors.JWKSTimeout) return 'the JWKS endpoint timed out';
  if (error instanceof errors.JWKSInvalid || error instanceof errors.JWKInvalid) return 'the JWKS endpoint answered an invalid key set';
  if (error instanceof errors.JOSEError) return 'the JWKS endpoint answered an error or not JSON';
  return 'the JWKS endpoint is unreachable';
}

/**
 * The role claim's value: the claim named exactly `path` when the token has
 * one (namespaced claims such as `https://example.com/roles` contain dots),
 * else the dot path walked from the top (`realm_access.roles`).
 */
export function claimAt(payload: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let current: unknown = payload;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** The groups of a verified token's claim at `path` (groups.ts); a claim that breaks the rules refuses the token (401). */
export function tokenGroups(payload: Record<string, unknown>, path: string): string[] {
  const read = groupsOfClaim(claimAt(payload, path));
  if ('problem' in read) throw new RequestError('unauthorized', `Invalid token: the groups claim ${JSON.stringify(path).slice(0, 80)} ${read.problem}`);
  return read.groups;
}

/** A string claim equal to `role`, or an array of strings containing it. */
export function hasRole(claim: unknown, role: string): boolean {
  if (typeof claim === 'string') return claim === role;
  return Array.isArray(claim) && claim.some((entry) => entry === role);
}

/**
 * Verifies the bearer tokens that are not the service's own HS256 tokens:
 * RS256/ES256 tokens of an identity provider, checked against its JWKS
 * (JWT_JWKS_URL), issuer and audience. Keys are cached by jose's remote key
 * set (refetched after 10 minutes, and on an unknown `kid` at most once per
 * JWT_JWKS_COOLDOWN_MS); a key set that cannot be fetched is a 503, never a
 * 401, so clients retry instead of signing in again.
 */
@Injectable()
export class IdentityTokenVerifier {
  private readonly logger = new Logger('IdentityTokens');
  private readonly jwks?: RemoteJWKSet;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const idp = config.auth.identityProvider;
    if (idp) {
      this.jwks = createRemoteJWKSet(new URL(idp.jwksUrl), { timeoutDuration: idp.timeoutMs, cooldownDuration: idp.cooldownMs });
    }
  }

  /**
   * Whether this verifier answers for the token: any well-formed JWS whose
   * header `alg` is not HS256 (so `none`, HS512, PS256… get a clear 401 here).
   * HS256 tokens and text that is not a JWS stay with the guard's own path.
   */
  handles(token: string): boolean {
    try {
      return decodeProtectedHeader(token).alg !== 'HS256';
    } catch {
      return false;
    }
  }

  async verify(token: string): Promise<AuthUser> {
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new RequestError('unauthorized', 'Invalid token: signature or format rejected');
    }
    if (!(IDENTITY_PROVIDER_ALGORITHMS as readonly unknown[]).includes(alg)) {
      throw new RequestError(
        'unauthorized',
        `Invalid token: algorithm ${JSON.stringify(alg ?? null).slice(0, 40)} is not accepted (HS256, or RS256/ES256 from the identity provider)`,
      );
    }
    const idp = this.config.auth.identityProvider;
    if (!idp || !this.jwks) {
      throw new RequestError('unauthorized', `Invalid token: ${alg} tokens are not accepted here (no identity provider is configured: JWT_JWKS_URL is unset)`);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (header, input) => this.key(header, input), {
        algorithms: [...IDENTITY_PROVIDER_ALGORITHMS],
        issuer: idp.issuer,
        audience: idp.audience,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.rejection(error);
    }
    const problem = userIdProblem(payload.sub);
    if (problem) throw new RequestError('unauthorized', `Invalid token: "sub" ${problem}`);
    checkTokenLifetime(payload, this.config.auth.maxTokenLifetimeSeconds);
    return {
      userId: payload.sub as string,
      isAdmin: hasRole(claimAt(payload, idp.roleClaim), idp.adminRole),
      groups: tokenGroups(payload, this.config.groups.claim),
      credentialExpiresAt: payload.exp,
    };
  }

  /** The key for the token's header; a key set that cannot be fetched becomes a 503 here, before jose sees it. */
  private async key(header: JWSHeaderParameters, input: FlattenedJWSInput): Promise<CryptoKey> {
    try {
      return await this.jwks!(header, input);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) {
        throw new RequestError('unauthorized', 'Invalid token: no key of the identity provider matches its "kid"');
      }
      if (error instanceof errors.JWKSMultipleMatchingKeys) {
        throw new RequestError('unauthorized', 'Invalid token: several keys of the identity provider match it; the token must name its "kid"');
      }
      this.logger.warn({ err: error, jwksUrl: this.config.auth.identityProvider?.jwksUrl }, 'JWKS fetch failed');
      throw new IdentityProviderUnavailableError(unavailableReason(error));
    }
  }

  private rejection(error: unknown): Error {
    if (error instanceof RequestError || error instanceof IdentityProviderUnavailableError) return error;
    if (error instanceof errors.JWTExpired) return new RequestError('unauthorized', 'Token expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      switch (error.claim) {
        case 'exp':
          return new RequestError('unauthorized', 'Token must carry an expiry (exp)');
        case 'iss':
          return new RequestError('unauthorized', 'Invalid token: issuer (iss) not accepted');
        case 'aud':
          return new RequestError('unauthorized', 'Invalid token: audience (aud) not accepted');
        case 'nbf':
          return new RequestError('unauthorized', 'Token not yet valid (nbf)');
        default:
          return new RequestError('unauthorized', `Invalid token: claim ${JSON.stringify(error.claim).slice(0, 40)} rejected`);
      }
    }
    return new RequestError('unauthorized', 'Invalid token: signature or format rejected');
  }
}
