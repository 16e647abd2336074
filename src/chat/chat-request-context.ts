import { Inject, Injectable, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import type { AuthUser, RequestWithUser } from '../auth/auth-user.js';
import { TurnContext, TurnMode } from '../agent/turn-context.js';
import { RequestError } from '../common/coded-error.js';

/**
 * Where a chat request's identity is resolved: request-scoped, one per chat
 * request. It hands the run a TurnContext of its own, which outlives the
 * request (a streamed run goes on after its client leaves) and travels with
 * the run through LangGraph's config; nothing of the request reaches the run.
 */
@Injectable({ scope: Scope.REQUEST })
export class ChatRequestContext {
  constructor(@Inject(REQUEST) private readonly request: RequestWithUser) {}

  /** The authenticated caller (the auth guard ran before the controller). */
  get user(): AuthUser {
    const user = this.request.user;
    if (!user) throw new RequestError('unauthorized', 'Authentication required');
    return user;
  }

  /** The context of a turn this request starts; the turn must be the caller's own. */
  turnFor(turn: { userId: string; sessionId: string; runId: string }, mode: TurnMode): TurnContext {
    if (turn.userId !== this.user.userId) throw new Error('a request may only start turns of its own user');
    return new TurnContext({ userId: turn.userId, sessionId: turn.sessionId, runId: turn.runId, mode });
  }
}
