import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { RequestError } from '../common/coded-error.js';
import type { Request } from 'express';
import type { RequestWithUser } from '../auth/auth-user.js';
import { STREAM_TICKET_PARAMETER } from '../auth/stream-ticket.decorator.js';
import { RunRegistry } from './run-registry.service.js';

/**
 * The second half of a stream ticket's check, on the routes that accept one:
 * the auth guard (which runs first) verified the ticket's signature,
 * audience, expiry, run and credential; runs live here, so this guard checks
 * that the ticket's user owns the run. A request with a bearer credential
 * passes through (the route answers 404 for another user's run itself).
 */
@Injectable()
export class StreamTicketRunGuard implements CanActivate {
  constructor(private readonly runs: RunRegistry) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & RequestWithUser>();
    if ((request.query as Record<string, unknown> | undefined)?.[STREAM_TICKET_PARAMETER] === undefined) return true;
    const runId = (request.params as Record<string, unknown> | undefined)?.run_id;
    const userId = request.user?.userId;
    if (typeof runId !== 'string' || userId === undefined || (await this.runs.find(runId.toLowerCase(), userId)) === null) {
      throw new RequestError('unauthorized', "Stream ticket does not belong to this run's user");
    }
    return true;
  }
}
