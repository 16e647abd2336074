import { Inject, Injectable } from '@nestjs/common';
import { JwtService, TokenExpiredError } from '@nestjs/jwt';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AuthUser } from './auth-user.js';
import { RequestError } from '../common/coded-error.js';

/**
 * The `aud` of every stream ticket. Tickets are verified with exactly this
 * audience, and the bearer guard refuses any token that carries it, so a
 * ticket is never a bearer token and a bearer token (no such `aud`) is never
 * a ticket.
 */
export const STREAM_TICKET_AUDIENCE = 'stream-ticket';

export interface StreamTicketClaims {
  sub: string;
  run_id: string;
  /** The API key that asked for the ticket: the ticket is refused once the key is revoked, deleted or expired. */
  api_key_id?: string;
}

export interface IssuedStreamTicket {
  ticket: string;
  /** Seconds until the ticket expires. */
  expires_in: number;
}

/**
 * Short-lived signed tickets that let a browser `EventSource` (which cannot
 * send `Authorization`) rejoin one run of one user: `?ticket=` on that run's
 * stream route only. A ticket stays valid until it expires, so EventSource's
 * own reconnects (same URL, plus `Last-Event-ID`) keep working. It never
 * outlives the credential that asked for it: it expires with the token (or
 * the key's expiry), and one asked for with an API key names the key, which
 * the guard checks on every use.
 */
@Injectable()
export class StreamTicketService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issue(user: AuthUser, runId: string): Promise<IssuedStreamTicket> {
    const now = Math.floor(Date.now() / 1000);
    const expiresAt = Math.min(now + this.config.streamTickets.ttlSeconds, user.credentialExpiresAt ?? Infinity);
    const claims: StreamTicketClaims & { iat: number; exp: number } = { sub: user.userId, run_id: runId, iat: now, exp: expiresAt };
    if (user.apiKeyId) claims.api_key_id = user.apiKeyId;
    const ticket = await this.jwt.signAsync(claims, { algorithm: 'HS256', audience: STREAM_TICKET_AUDIENCE });
    return { ticket, expires_in: Math.max(0, expiresAt - now) };
  }

  /** The ticket's user and run; 401 when it is expired, tampered, or not a stream ticket. */
  async verify(ticket: string): Promise<StreamTicketClaims> {
    let claims: Partial<Record<keyof StreamTicketClaims | 'exp', unknown>>;
    try {
      claims = await this.jwt.verifyAsync(ticket, { algorithms: ['HS256'], audience: STREAM_TICKET_AUDIENCE });
    } catch (error) {
      if (error instanceof TokenExpiredError) throw new RequestError('unauthorized', 'Stream ticket expired: get a new one from POST /api/chat/runs/:run_id/ticket');
      throw new RequestError('unauthorized', 'Invalid stream ticket: signature, format or type rejected (a bearer token is not a ticket)');
    }
    if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || typeof claims.run_id !== 'string') {
      throw new RequestError('unauthorized', 'Invalid stream ticket: it must carry exp, sub and run_id');
    }
    if (claims.api_key_id !== undefined && typeof claims.api_key_id !== 'string') {
      throw new RequestError('unauthorized', 'Invalid stream ticket: api_key_id must be a string');
    }
    return { sub: claims.sub, run_id: claims.run_id, ...(claims.api_key_id === undefined ? {} : { api_key_id: claims.api_key_id }) };
  }
}
