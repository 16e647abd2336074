import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService, TokenExpiredError } from '@nestjs/jwt';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

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
}

export interface IssuedStreamTicket {
  ticket: string;
  /** Seconds until the ticket expires. */
  expires_in: number;
}

/**
 * Whether a run belongs to a user. Runs live in the chat module, above auth,
 * so the chat module provides this and the guard looks it up when a ticket
 * arrives.
 */
export abstract class RunOwnership {
  abstract isOwnedBy(runId: string, userId: string): Promise<boolean>;
}

/**
 * Short-lived signed tickets that let a browser `EventSource` (which cannot
 * send `Authorization`) rejoin one run of one user: `?ticket=` on that run's
 * stream route only. A ticket stays valid until it expires, so EventSource's
 * own reconnects (same URL, plus `Last-Event-ID`) keep working.
 */
@Injectable()
export class StreamTicketService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issue(userId: string, runId: string): Promise<IssuedStreamTicket> {
    const expiresIn = this.config.streamTickets.ttlSeconds;
    const claims: StreamTicketClaims = { sub: userId, run_id: runId };
    const ticket = await this.jwt.signAsync(claims, { algorithm: 'HS256', audience: STREAM_TICKET_AUDIENCE, expiresIn });
    return { ticket, expires_in: expiresIn };
  }

  /** The ticket's user and run; 401 when it is expired, tampered, or not a stream ticket. */
  async verify(ticket: string): Promise<StreamTicketClaims> {
    let claims: Partial<Record<keyof StreamTicketClaims | 'exp', unknown>>;
    try {
      claims = await this.jwt.verifyAsync(ticket, { algorithms: ['HS256'], audience: STREAM_TICKET_AUDIENCE });
    } catch (error) {
      if (error instanceof TokenExpiredError) throw new UnauthorizedException('Stream ticket expired: get a new one from POST /api/chat/runs/:run_id/ticket');
      throw new UnauthorizedException('Invalid stream ticket: signature, format or type rejected (a bearer token is not a ticket)');
    }
    if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || typeof claims.run_id !== 'string') {
      throw new UnauthorizedException('Invalid stream ticket: it must carry exp, sub and run_id');
    }
    return { sub: claims.sub, run_id: claims.run_id };
  }
}
