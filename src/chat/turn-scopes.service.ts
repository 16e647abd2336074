import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user.js';
import { RequestError } from '../common/coded-error.js';
import { CollectionAccess, CollectionNotFoundError, type RetrievalScope } from '../knowledge/public-api.js';
import { savedCollectionIds, SESSION_COLLECTION_IDS_KEY } from '../session/session-mapping.js';
import { SessionReads } from '../session/session-reads.service.js';

/**
 * The knowledge collections a turn searches, decided per request from
 * PostgreSQL (the caller's access entries; nothing cached, so a revoked
 * share holds from the next request on, on every instance): those the turn
 * names, else those saved on its session (PATCH /api/sessions/:id), else
 * every collection the caller can read. A named or saved collection the
 * caller cannot read answers 404 `collection_not_found`. Every protocol's
 * turn gets its scope here: TurnContext cannot be made without one.
 */
@Injectable()
export class TurnScopes {
  constructor(
    private readonly access: CollectionAccess,
    private readonly sessions: SessionReads,
  ) {}

  /** `named`: the turn's own `collection_ids` (absent or null: none); `sessionId`: the session it runs in, if any. */
  async forTurn(user: AuthUser, named: readonly string[] | null | undefined, sessionId?: string): Promise<RetrievalScope> {
    if (named) return this.access.retrievalScope(user, named);
    // Another user's session (or none yet) has nothing saved for this caller; starting the turn then answers for it.
    const saved = sessionId ? savedCollectionIds((await this.sessions.sessionMetadata(user.userId, sessionId))?.[SESSION_COLLECTION_IDS_KEY]) : null;
    if (!saved) return this.access.retrievalScope(user);
    try {
      return await this.access.retrievalScope(user, saved);
    } catch (error) {
      if (!(error instanceof CollectionNotFoundError)) throw error;
      throw new RequestError(
        'collection_not_found',
        `${error.message}: it is saved on session ${sessionId} (PATCH /api/sessions/${sessionId} with collection_ids null, or other collections, to search again)`,
      );
    }
  }

  /** The named collections, each checked readable by `user` (404 `collection_not_found` for the first that is not), as their ids. */
  async requireReadable(user: AuthUser, named: readonly string[]): Promise<string[]> {
    return this.access.requireReadable(user, named);
  }
}
