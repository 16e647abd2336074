import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JwtService, TokenExpiredError } from '@nestjs/jwt';
import { decodeProtectedHeader } from 'jose';
import type { Request } from 'express';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AuthUser, RequestWithUser } from './auth-user.js';
import { IdentityTokenVerifier, tokenGroups } from './identity-token.verifier.js';
import { API_KEY_PREFIX, ApiKeyService } from './api-keys/api-key.service.js';
import { IS_PUBLIC } from './public.decorator.js';
import { checkTokenLifetime } from './token-lifetime.js';
import { userIdProblem } from './user-id.js';
import { ACCEPTS_STREAM_TICKET, STREAM_TICKET_PARAMETER } from './stream-ticket.decorator.js';
import { STREAM_TICKET_AUDIENCE, StreamTicketService } from './stream-ticket.service.js';
import { RequestError } from '../common/coded-error.js';

interface TokenClaims {
  sub?: unknown;
  role?: unknown;
  exp?: unknown;
  iat?: unknown;
  aud?: unknown;
}

export { MAX_USER_ID_LENGTH, userIdProblem } from './user-id.js';

/** Query parameters that may carry a credential: a stream ticket, or a token someone put in a URL (refused). */
const CREDENTIAL_QUERY_PARAMETERS: ReadonlySet<string> = new Set([STREAM_TICKET_PARAMETER, 'access_token', 'token']);

/**
 * Global guard: every route needs `Authorization: Bearer <credential>` unless
 * marked @Public(), the credential being an HS256 JWT (JWT_SECRET), an
 * RS256/ES256 token of the identity provider (JWT_JWKS_URL) or an API key
 * (`rk-…`), which may also come as `X-Api-Key: rk-…` (the LangGraph SDK's
 * header); a route marked @AcceptsStreamTicket() also accepts
 * `?ticket=<stream ticket>` for its own run. Credentials are never taken
 * from any other query parameter. Whether the ticket's user owns its run
 * is checked by the chat module's StreamTicketRunGuard on those routes (runs
 * live there, above auth).
 */
@Injectable()
export class JwtAuthGuard implements CanActivate {
  constructor(
    private readonly jwt: JwtService,
    private readonly reflector: Reflector,
    private readonly tickets: StreamTicketService,
    private readonly apiKeys: ApiKeyService,
    private readonly identityTokens: IdentityTokenVerifier,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<Request & RequestWithUser>();
    const query = (request.query ?? {}) as Record<string, unknown>;
    for (const name of CREDENTIAL_QUERY_PARAMETERS) {
      if (name !== STREAM_TICKET_PARAMETER && query[name] !== undefined) {
        throw new RequestError('unauthorized', `A token is never accepted in the query string (${name}): send "Authorization: Bearer <token>"`);
      }
    }
    const ticket = query[STREAM_TICKET_PARAMETER];
    const apiKeyHeader = request.headers['x-api-key'];
    if (ticket === undefined) {
      request.user =
        apiKeyHeader === undefined ? await this.authenticate(request.headers.authorization) : await this.authenticateApiKeyHeader(apiKeyHeader, request.headers.authorization);
      return true;
    }
    if (!this.reflector.getAllAndOverride<boolean>(ACCEPTS_STREAM_TICKET, targets)) {
      throw new RequestError('unauthorized', 'This route does not accept a stream ticket: send "Authorization: Bearer <token>"');
    }
    if (request.headers.authorization !== undefined) {
      throw new RequestError('invalid_request', 'Send either the Authorization header or ?ticket=, not both');
    }
    request.user = await this.authenticateTicket(ticket, (request.params as Record<string, unknown> | undefined)?.run_id);
    return true;
  }

  /** `X-Api-Key: rk-…`, sent instead of the Authorization header (both at once are refused: they might name two users). */
  private async authenticateApiKeyHeader(header: string | string[], authorization: string | undefined): Promise<AuthUser> {
    if (authorization !== undefined) throw new RequestError('invalid_request', 'Send either the Authorization header or X-Api-Key, not both');
    if (typeof header !== 'string' || !header.trim().startsWith(API_KEY_PREFIX)) {
      throw new RequestError('unauthorized', `Malformed X-Api-Key header: send one API key ("${API_KEY_PREFIX}…")`);
    }
    return this.apiKeys.authenticate(header.trim());
  }

  private async authenticateTicket(ticket: unknown, pathRunId: unknown): Promise<AuthUser> {
    if (typeof ticket !== 'string' || ticket === '') throw new RequestError('unauthorized', 'Malformed stream ticket: send exactly one ?ticket=');
    const claims = await this.tickets.verify(ticket);
    if (typeof pathRunId !== 'string' || claims.run_id !== pathRunId.toLowerCase()) {
      throw new RequestError('unauthorized', 'Stream ticket is for another run');
    }
    if (userIdProblem(claims.sub) !== null) {
      throw new RequestError('unauthorized', "Stream ticket does not belong to this run's user");
    }
    if (claims.api_key_id !== undefined && !(await this.apiKeys.isLive(claims.api_key_id, claims.sub))) {
      throw new RequestError('unauthorized', 'Stream ticket no longer valid: the API key that issued it was revoked, deleted or has expired');
    }
    // A ticket only opens its run's stream: never an admin credential, and no group's access.
    return { userId: claims.sub, isAdmin: false, groups: [] };
  }

  private async authenticate(header: string | undefined): Promise<AuthUser> {
    if (!header) throw new RequestError('unauthorized', 'Missing Authorization header: send "Bearer <token>"');
    const [scheme, token, ...rest] = header.trim().split(/\s+/);
    if (scheme?.toLowerCase() !== 'bearer' || !token || rest.length > 0) {
      throw new RequestError('unauthorized', 'Malformed Authorization header: send "Bearer <token>"');
    }
    if (token.startsWith(API_KEY_PREFIX)) return this.apiKeys.authenticate(token);
    if (this.identityTokens.handles(token)) return this.identityTokens.verify(token);
    let claims: TokenClaims;
    try {
      // RFC 7515: a token naming header extensions as critical must be refused by a verifier that does not understand them.
      if ('crit' in decodeProtectedHeader(token)) throw new RequestError('unauthorized', 'Invalid token: critical header extensions ("crit") are not supported');
      claims = await this.jwt.verifyAsync<TokenClaims & object>(token, { algorithms: ['HS256'] });
    } catch (error) {
      if (error instanceof RequestError) throw error;
      if (error instanceof TokenExpiredError) throw new RequestError('unauthorized', 'Token expired');
      throw new RequestError('unauthorized', 'Invalid token: signature or format rejected');
    }
    if (claims.aud === STREAM_TICKET_AUDIENCE || (Array.isArray(claims.aud) && claims.aud.includes(STREAM_TICKET_AUDIENCE))) {
      throw new RequestError('unauthorized', "A stream ticket is not a bearer token: pass it as ?ticket= on its run's stream route");
    }
    const problem = userIdProblem(claims.sub);
    if (problem) throw new RequestError('unauthorized', `Invalid token: "sub" ${problem}`);
    checkTokenLifetime(claims, this.config.auth.maxTokenLifetimeSeconds);
    const groups = tokenGroups(claims as Record<string, unknown>, this.config.groups.claim);
    return { userId: claims.sub as string, isAdmin: claims.role === 'admin', groups, credentialExpiresAt: claims.exp as number };
  }
}
