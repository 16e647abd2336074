import { Injectable } from '@nestjs/common';
import { ResilientCache } from '../cache/resilient-cache.service.js';
import { ReadReplica } from '../database/database.module.js';
import { markTracesNormalized } from '../trace/trace.interceptor.js';
import { CoalescedVersionReads } from './coalesced-version-reads.js';
import { MessageInfo, SESSION_PAGE_DEFAULT, SESSION_PAGE_MAX, SessionInfo } from './session.dto.js';
import { decodeCursor } from './session-cursor.js';
import { messagesCacheKey, sessionsCacheKey } from './session-cache-keys.js';
import { MessagePage, MessageRow, normalizeMessageRecords, SessionPage, SessionRow, toMessageInfo, toSessionInfo, toSessionPage } from './session-mapping.js';
import { MessageRepository } from './message.repository.js';
import { SessionListFilter, SessionRepository } from './session.repository.js';
import { Metrics } from '../observability/metrics.js';

/**
 * The shape of what each cache holds: a cached copy in any other shape
 * (written by an older version of the service) is a miss, whatever its
 * version says. List 3: its rows carry their run in flight.
 */
const LIST_FORMAT = 4;
const TRANSCRIPT_FORMAT = 2;

type CachedSessionRow = Omit<SessionRow, 'created_at' | 'updated_at' | 'active_run_started_at'> & {
  created_at: string;
  updated_at: string;
  active_run_started_at: string | null;
};

/** What the session-list cache holds: the head of the list, one row more than a page can ask for, at a list version. */
interface CachedSessionHead {
  format: typeof LIST_FORMAT;
  version: string;
  rows: CachedSessionRow[];
}

/** How many users' list heads an instance keeps in memory besides Redis (the most recently read ones). */
const LOCAL_HEADS = 256;

/** A list head kept in memory, with the pages already built from it (by `limit`), which are frozen and shared. */
interface LocalHead {
  head: CachedSessionHead;
  pages: Map<number, SessionPage>;
}

/** What the transcript cache holds: the messages at a transcript version. */
interface CachedTranscript {
  format: typeof TRANSCRIPT_FORMAT;
  version: string;
  messages: MessageInfo[];
}

/**
 * Reads of sessions and transcripts. PostgreSQL is the source of truth,
 * Redis a cache in front of it: cached copies carry the version they were
 * read at (the session's `version`, the user's `chat_user_versions` row),
 * bumped in the transaction of every change, a run's start and end
 * included; a read serves a cached copy only after checking that its
 * version is still the current one. A cache that missed an invalidation
 * (Redis stalled while another instance wrote) therefore never serves stale data.
 */
@Injectable()
export class SessionReads {
  /**
   * The list heads this instance read last, by user: checked against the list
   * version exactly like Redis's copy, so a warm list costs one primary-key
   * lookup (shared with the lists asked for at the same time) and no Redis
   * round trip, and is never stale either.
   */
  private readonly localHeads = new Map<string, LocalHead>();
  private readonly listVersions: CoalescedVersionReads;

  constructor(
    private readonly sessions: SessionRepository,
    private readonly messages: MessageRepository,
    private readonly cache: ResilientCache,
    private readonly metrics: Metrics,
    private readonly replica: ReadReplica,
  ) {
    this.listVersions = new CoalescedVersionReads((userIds) => this.sessions.listVersions(userIds));
  }

  /** The full transcript in conversation order, or null when the user has no such session. */
  async getSessionMessages(userId: string, sessionId: string): Promise<MessageInfo[] | null> {
    const cached = await this.currentCachedTranscript(userId, sessionId);
    if (cached === null) return null;
    if (cached) return cached;
    const transcript = await this.readTranscript(userId, sessionId);
    if (!transcript) return null;
    const records = transcript.rows.map(toMessageInfo);
    await this.cache.set(messagesCacheKey(userId, sessionId), {
      format: TRANSCRIPT_FORMAT,
      version: transcript.version,
      messages: records,
    } satisfies CachedTranscript);
    return records;
  }

  /**
   * A page of the transcript: the last `limit` messages before seq `before`
   * (all of them without `limit`, up to the newest without `before`), in
   * conversation order. Served from the cached transcript when it is current,
   * else the page alone is read. Null when the user has no such session.
   */
  async getSessionMessagePage(userId: string, sessionId: string, page: { before?: number; limit?: number } = {}): Promise<MessagePage | null> {
    if (page.before === undefined && page.limit === undefined) {
      const messages = await this.getSessionMessages(userId, sessionId);
      return messages && { messages, next_before: null };
    }
    const cached = await this.currentCachedTranscript(userId, sessionId);
    if (cached === null) return null;
    if (cached) {
      const earlier = page.before === undefined ? cached : cached.filter((m) => m.seq < page.before!);
      const messages = page.limit === undefined ? earlier : earlier.slice(-page.limit);
      return { messages, next_before: messages.length < earlier.length ? messages[0].seq : null };
    }
    const rows = await this.readTranscriptPage(userId, sessionId, page.before ?? 2 ** 31 - 1, page.limit === undefined ? null : page.limit + 1);
    if (rows === null) return null;
    const newestFirst = rows.map(toMessageInfo);
    const hasOlder = page.limit !== undefined && newestFirst.length > page.limit;
    const messages = newestFirst.slice(0, page.limit).reverse();
    return { messages, next_before: hasOlder ? messages[0].seq : null };
  }

  /**
   * A page of the user's sessions, newest first, optionally only those whose
   * title contains `q`. The first page without `q` is served from the cache
   * while the list version is current (a run's start and end move it too).
   */
  async listSessionInfos(userId: string, page: { limit?: number; cursor?: string; q?: string } = {}): Promise<SessionPage> {
    const limit = Math.min(Math.max(page.limit ?? SESSION_PAGE_DEFAULT, 1), SESSION_PAGE_MAX);
    const titleContains = page.q ? page.q : undefined;
    if (page.cursor || titleContains !== undefined) {
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      return toSessionPage(await this.readList(userId, limit + 1, { after, titleContains }, () => this.listVersions.version(userId)), limit);
    }
    const key = sessionsCacheKey(userId);
    const version = await this.listVersions.version(userId);
    const local = this.localHeads.get(userId);
    if (local && local.head.version === version) {
      this.metrics.cacheLookup('session_list', true);
      return pageOf(local, limit);
    }
    const cached = await this.cache.get<CachedSessionHead>(key);
    if (cached && cached.format === LIST_FORMAT && cached.version === version && Array.isArray(cached.rows)) {
      this.metrics.cacheLookup('session_list', true);
      return pageOf(this.keepLocally(userId, cached), limit);
    }
    this.metrics.cacheLookup('session_list', false);
    // The version is read before the rows: rows newer than it are cached under an old version, which only costs a miss.
    const rows = await this.readList(userId, SESSION_PAGE_MAX + 1, {}, version);
    const head: CachedSessionHead = {
      format: LIST_FORMAT,
      version,
      rows: rows.map((row) => ({
        ...row,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        active_run_started_at: row.active_run_started_at?.toISOString() ?? null,
      })),
    };
    await this.cache.set(key, head);
    return pageOf(this.keepLocally(userId, head), limit);
  }

  /**
   * The user's sessions: on the read replica when it holds the list version
   * `seen` (read from the primary) or a later one, else on the primary.
   */
  private readList(userId: string, take: number, filter: SessionListFilter, seen: string | (() => Promise<string>)): Promise<SessionRow[]> {
    return this.replica.read('session_list', typeof seen === 'string' ? [seen] : async () => [await seen()], (db) => this.sessions.listOn(db, userId, take, filter));
  }

  /**
   * The whole transcript: on the read replica when it holds the session's
   * version on the primary or a later one (every append moves it), else on the primary.
   */
  private readTranscript(userId: string, sessionId: string): Promise<{ version: string; rows: MessageRow[] } | null> {
    return this.replica.read(
      'transcript',
      () => this.transcriptVersions(userId, sessionId),
      async (db) => {
        const transcript = await this.messages.transcript(userId, sessionId, db);
        return { versions: [transcript?.version ?? null], value: transcript };
      },
    );
  }

  /** A page of the transcript, newest first, by the same rule. */
  private readTranscriptPage(userId: string, sessionId: string, before: number, limit: number | null): Promise<MessageRow[] | null> {
    return this.replica.read(
      'transcript',
      () => this.transcriptVersions(userId, sessionId),
      async (db) => {
        const page = await this.messages.newestBeforeOn(db, userId, sessionId, before, limit);
        return { versions: [page?.version ?? null], value: page?.rows ?? null };
      },
    );
  }

  /** The transcript's version on the primary, as ReadReplica takes it; null: the user has no such session. */
  private async transcriptVersions(userId: string, sessionId: string): Promise<[string] | null> {
    const version = await this.sessions.transcriptVersion(userId, sessionId);
    return version === null ? null : [version];
  }

  private keepLocally(userId: string, head: CachedSessionHead): LocalHead {
    const local: LocalHead = { head, pages: new Map() };
    this.localHeads.delete(userId);
    this.localHeads.set(userId, local);
    if (this.localHeads.size > LOCAL_HEADS) this.localHeads.delete(this.localHeads.keys().next().value!);
    return local;
  }

  /** One of the user's sessions, read from the database; null when the user has no such session. */
  async getSessionInfo(userId: string, sessionId: string): Promise<SessionInfo | null> {
    const [row] = await this.sessions.list(userId, 1, { sessionId });
    return row ? toSessionInfo(row) : null;
  }

  /**
   * What a turn needs to build the model's context, without reading the whole
   * transcript: the session metadata, its message count, and the last `limit`
   * messages after `afterSeq`, in order. Null when the user has no such session.
   */
  async getTurnContext(
    userId: string,
    sessionId: string,
    limit: number,
    afterSeq = 0,
  ): Promise<{ metadata: Record<string, unknown>; messageCount: number; recent: MessageInfo[] } | null> {
    const head = await this.sessions.head(userId, sessionId);
    if (!head) return null;
    const rows = await this.messages.range(sessionId, Math.max(afterSeq, head.message_count - limit), head.message_count);
    return { metadata: head.metadata, messageCount: head.message_count, recent: rows.map(toMessageInfo) };
  }

  /** Messages with fromSeq < seq <= toSeq, in order. */
  async getMessageRange(userId: string, sessionId: string, fromSeq: number, toSeq: number): Promise<MessageInfo[]> {
    if ((await this.sessions.owner(sessionId)) !== userId) return [];
    return (await this.messages.range(sessionId, fromSeq, toSeq)).map(toMessageInfo);
  }

  /** The session's metadata, or null when the user has no such session. */
  async sessionMetadata(userId: string, sessionId: string): Promise<Record<string, unknown> | null> {
    return (await this.sessions.head(userId, sessionId))?.metadata ?? null;
  }

  /** Who owns a session: null when it does not exist. */
  async sessionOwner(sessionId: string): Promise<string | null> {
    return this.sessions.owner(sessionId);
  }

  /** Drops the cached copies a change made out of date (the versions already keep them from being served). */
  async forget(userId: string, sessionId?: string): Promise<void> {
    this.localHeads.delete(userId);
    await this.cache.del(...(sessionId ? [messagesCacheKey(userId, sessionId)] : []), sessionsCacheKey(userId));
  }

  /** Drops the cached transcript alone. */
  async forgetTranscript(userId: string, sessionId: string): Promise<void> {
    await this.cache.del(messagesCacheKey(userId, sessionId));
  }

  /**
   * The cached transcript when its version is the current one; undefined when
   * there is none (or it is out of date); null when the user has no such session.
   */
  private async currentCachedTranscript(userId: string, sessionId: string): Promise<MessageInfo[] | null | undefined> {
    const found = await this.cachedTranscript(userId, sessionId);
    if (found !== null) this.metrics.cacheLookup('transcript', found !== undefined);
    return found;
  }

  private async cachedTranscript(userId: string, sessionId: string): Promise<MessageInfo[] | null | undefined> {
    const cached = await this.cache.get<CachedTranscript>(messagesCacheKey(userId, sessionId));
    if (!cached || cached.format !== TRANSCRIPT_FORMAT || typeof cached.version !== 'string' || !Array.isArray(cached.messages)) {
      return undefined;
    }
    const current = await this.sessions.transcriptVersion(userId, sessionId);
    if (current === null) return null;
    return current === cached.version ? normalizeMessageRecords(cached.messages) : undefined;
  }
}

/**
 * A page of a list head, built once per head and limit: the page is frozen
 * (every request at this version shares it) and its traces are normalized
 * already (`toSessionInfo`), so the response interceptor passes it through.
 */
function pageOf(local: LocalHead, limit: number): SessionPage {
  let page = local.pages.get(limit);
  if (!page) {
    page = markTracesNormalized(deepFreeze(headPage(local.head, limit)));
    local.pages.set(limit, page);
  }
  return page;
}

/** A page of a cached list head. */
function headPage(head: CachedSessionHead, limit: number): SessionPage {
  return toSessionPage(
    head.rows.map((row) => ({
      ...row,
      created_at: new Date(row.created_at),
      updated_at: new Date(row.updated_at),
      active_run_started_at: row.active_run_started_at === null ? null : new Date(row.active_run_started_at),
    })),
    limit,
  );
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
