import { Injectable } from '@nestjs/common';
import { SessionReads } from './session-reads.service.js';
import { SessionThread, SessionThreadFilter, SessionThreadMatch, SessionThreadRepository } from './session-thread.repository.js';

export { CLIENT_METADATA_KEY, SESSION_THREAD_STATUSES, THREAD_SORT_COLUMNS } from './session-thread.repository.js';
export type { SessionThread, SessionThreadFilter, SessionThreadMatch, SessionThreadStatus, ThreadSortColumn } from './session-thread.repository.js';

/**
 * Sessions seen as threads (the LangGraph Server API): created empty, with
 * metadata of the client's own that it can search by containment, and a
 * status made of the session's run in flight, its paused question and its
 * last message. Always addressed with the owner: another user's session is a
 * missing one.
 */
@Injectable()
export class SessionThreads {
  constructor(
    private readonly threads: SessionThreadRepository,
    private readonly reads: SessionReads,
  ) {}

  /** Creates an empty session with the client's metadata; `exists` when the id is taken (by this user or another). */
  async create(userId: string, sessionId: string, metadata: Record<string, unknown>): Promise<'created' | 'exists'> {
    const outcome = await this.threads.create(userId, sessionId, metadata);
    if (outcome === 'created') await this.reads.forget(userId);
    return outcome;
  }

  /** Shallow-merges into the client metadata, unless its JSON would be over `maxBytes`. */
  mergeMetadata(userId: string, sessionId: string, patch: Record<string, unknown>, maxBytes: number): Promise<'merged' | 'missing' | 'too_large'> {
    return this.threads.mergeMetadata(userId, sessionId, patch, maxBytes);
  }

  /** Sets keys of the client metadata only where they are absent (a run names its graph and assistant on its thread). */
  addMissingMetadata(userId: string, sessionId: string, defaults: Record<string, unknown>): Promise<void> {
    return this.threads.addMissingMetadata(userId, sessionId, defaults);
  }

  /** Removes the messages a cancelled run kept, when nothing came after them (a LangGraph rollback); how many went. */
  async removeCancelledRun(userId: string, sessionId: string, runId: string): Promise<number> {
    const removed = await this.threads.removeCancelledRun(userId, sessionId, runId);
    if (removed > 0) await this.reads.forget(userId, sessionId);
    return removed;
  }

  /**
   * Cuts the transcript back to its first `keepSeq` messages (a LangGraph fork: regenerate, edit) and removes
   * `metadataKeys` from the session's metadata; the number of messages removed, or null when the user has no such session.
   */
  async truncate(userId: string, sessionId: string, keepSeq: number, metadataKeys: string[]): Promise<number | null> {
    const removed = await this.threads.truncate(userId, sessionId, keepSeq, metadataKeys);
    if (removed !== null) await this.reads.forget(userId, sessionId);
    return removed;
  }

  /** One of the user's sessions as a thread; null when the user has none by that id. */
  async get(userId: string, sessionId: string): Promise<SessionThread | null> {
    const [thread] = await this.threads.search(userId, { ids: [sessionId], limit: 1, offset: 0, sortBy: 'created_at', sortOrder: 'desc' });
    return thread ?? null;
  }

  /** How many of the user's sessions match (ids, metadata, status). */
  count(userId: string, filter: SessionThreadMatch): Promise<number> {
    return this.threads.count(userId, filter);
  }

  /** The user's sessions as threads, filtered, sorted and paged. */
  search(userId: string, filter: SessionThreadFilter): Promise<SessionThread[]> {
    return this.threads.search(userId, filter);
  }
}
