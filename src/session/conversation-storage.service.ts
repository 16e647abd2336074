import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ResilientCache } from '../cache/resilient-cache.service.js';
import { sqlRows } from '../database/sql.js';
import { MessageInfo, MessageType, SESSION_PAGE_DEFAULT, SESSION_PAGE_MAX, SessionInfo } from './session.dto.js';
import { normalizeAndValidateRagTrace, normalizePendingHitl, normalizeRagTrace } from '../trace/trace.normalizer.js';
import { toStorableText } from '../common/storable-text.js';
import { decodeCursor, encodeCursor } from './session-cursor.js';
import { SessionNotFoundError } from './session.errors.js';

export const TITLE_MAX_LENGTH = 200;

/** A message to store; `rag_trace` is normalized before it is written. */
export interface NewMessage {
  type: MessageType;
  content: string;
  rag_trace?: unknown;
}

export interface AppendTurnOptions {
  /** Used only when the session is new or has no title yet. */
  title?: string;
  /** Shallow-merged into the session's metadata. */
  metadata?: Record<string, unknown>;
  /**
   * False for turns of a session opened with `openSession`: a session deleted
   * meanwhile stays deleted and the append fails with SessionNotFoundError.
   */
  createIfMissing?: boolean;
  /**
   * Runs inside the turn's transaction, after the messages are written; a
   * throw rolls the whole turn back (the chat layer records the run's end
   * there, so a run that lost its claim cannot commit).
   */
  withinTransaction?: (manager: EntityManager) => Promise<void>;
}

export interface AppendTurnResult {
  session_id: string;
  /** Sequence numbers given to the new messages, in order. */
  seqs: number[];
  message_count: number;
  created: boolean;
}

export interface SessionPage {
  sessions: SessionInfo[];
  next_cursor: string | null;
}

interface SessionRow {
  id: string;
  title: string;
  updated_at: Date;
  updated_micros: string;
  message_count: number;
  pending_hitl: unknown;
}

/** What the session-list cache holds: the head of the list, one row more than a page can ask for, at a list version. */
interface CachedSessionHead {
  version: string;
  rows: Array<Omit<SessionRow, 'updated_at'> & { updated_at: string }>;
}

/** What the transcript cache holds: the messages at a transcript version. */
interface CachedTranscript {
  version: string;
  messages: MessageInfo[];
}

/**
 * Bumps the user's session-list version. Written as a data-modifying WITH
 * clause of the statement that changes the list, so the bump and the change
 * commit together (the statement runs it whether or not it reads it).
 */
const BUMP_LIST_VERSION = `bump AS (
  INSERT INTO chat_user_versions (user_id) VALUES ($2)
  ON CONFLICT (user_id) DO UPDATE SET version = nextval('chat_cache_version_seq')
)`;

export function messagesCacheKey(userId: string, sessionId: string): string {
  return `chat_messages:${userId}:${sessionId}`;
}

export function sessionsCacheKey(userId: string): string {
  return `chat_sessions:${userId}`;
}

/** F17: traces in records read from the cache or written by older versions are normalized again. */
function normalizeMessageRecords(records: MessageInfo[]): MessageInfo[] {
  return records.map((record) => ({ ...record, rag_trace: normalizeRagTrace(record.rag_trace) }));
}

/** F16 */
export function toLangChainMessages(records: MessageInfo[]): BaseMessage[] {
  return records.map((record) => {
    switch (record.type) {
      case 'human':
        return new HumanMessage(record.content);
      case 'ai':
        return new AIMessage(record.content);
      case 'system':
        return new SystemMessage(record.content);
    }
  });
}

/** A session's title from its first message: one line, at most 60 characters. */
export function titleFrom(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return Array.from(oneLine).slice(0, 60).join('') || 'New conversation';
}

function defaultTitle(messages: NewMessage[]): string {
  const first = messages.find((m) => m.type === 'human') ?? messages[0];
  return titleFrom(first?.content ?? '');
}

/**
 * Conversation storage (seed P03): PostgreSQL is the source of truth, Redis
 * a cache in front of it. Sessions are always addressed with their owner, so
 * another user's session behaves exactly like a missing one.
 *
 * Cached copies carry the version they were read at (the session's
 * `version`, the user's `chat_user_versions` row), bumped in the transaction
 * of every change; a read serves a cached copy only after checking that its
 * version is still the current one. A cache that missed an invalidation (Redis
 * stalled while another instance wrote) therefore never serves stale data.
 */
@Injectable()
export class ConversationStorage {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cache: ResilientCache,
  ) {}

  /**
   * Commits one turn: finds or creates the session, appends the messages
   * after the last one and bumps the session row, in one transaction. The
   * session row lock orders concurrent turns, so sequence numbers never
   * collide or skip; earlier messages are never rewritten.
   */
  async appendTurn(
    userId: string,
    sessionId: string,
    messages: NewMessage[],
    options: AppendTurnOptions = {},
  ): Promise<AppendTurnResult> {
    const title = this.clampTitle(options.title ?? defaultTitle(messages));
    const result = await this.dataSource.transaction(async (manager) => {
      const created = options.createIfMissing === false ? false : await this.createSessionIfMissing(manager, userId, sessionId, title);
      const [row] = await sqlRows<{ message_count: number }>(manager, `WITH ${BUMP_LIST_VERSION}
         UPDATE chat_sessions
            SET message_count = message_count + $3,
                updated_at = clock_timestamp(),
                version = nextval('chat_cache_version_seq'),
                metadata = metadata || $4::jsonb,
                title = CASE WHEN title = '' THEN $5 ELSE title END
          WHERE id = $1 AND user_id = $2
        RETURNING message_count`,
        [sessionId, userId, messages.length, JSON.stringify(options.metadata ?? {}), title],);
      if (!row) throw new SessionNotFoundError(sessionId);
      const firstSeq = row.message_count - messages.length + 1;
      const seqs = messages.map((_, i) => firstSeq + i);
      await this.insertMessages(manager, sessionId, seqs, messages);
      await options.withinTransaction?.(manager);
      return { session_id: sessionId, seqs, message_count: row.message_count, created };
    });
    await this.cache.del(messagesCacheKey(userId, sessionId), sessionsCacheKey(userId));
    return result;
  }

  /**
   * F18, the seed's save(): replaces the whole history of a session (find or
   * create, merge metadata, rewrite messages), then refreshes the message
   * cache and drops the session list. For imports and edits; turns use appendTurn.
   */
  async save(
    userId: string,
    sessionId: string,
    messages: NewMessage[],
    metadata: Record<string, unknown> = {},
  ): Promise<void> {
    const title = this.clampTitle(defaultTitle(messages));
    await this.dataSource.transaction(async (manager) => {
      await this.createSessionIfMissing(manager, userId, sessionId, title);
      const [row] = await sqlRows<{ id: string }>(manager, `WITH ${BUMP_LIST_VERSION}
         UPDATE chat_sessions
            SET message_count = $3, updated_at = clock_timestamp(), version = nextval('chat_cache_version_seq'), metadata = metadata || $4::jsonb,
                title = CASE WHEN title = '' THEN $5 ELSE title END
          WHERE id = $1 AND user_id = $2
        RETURNING id`,
        [sessionId, userId, messages.length, JSON.stringify(metadata), title],);
      if (!row) throw new SessionNotFoundError(sessionId);
      await manager.query('DELETE FROM chat_messages WHERE session_id = $1', [sessionId]);
      await this.insertMessages(manager, sessionId, messages.map((_, i) => i + 1), messages);
    });
    await this.cache.del(messagesCacheKey(userId, sessionId), sessionsCacheKey(userId));
  }

  /** F23: the full transcript in conversation order, or null when the user has no such session. */
  async getSessionMessages(userId: string, sessionId: string): Promise<MessageInfo[] | null> {
    const key = messagesCacheKey(userId, sessionId);
    const cached = await this.cache.get<CachedTranscript>(key);
    if (cached && typeof cached.version === 'string' && Array.isArray(cached.messages)) {
      const current = await this.transcriptVersion(userId, sessionId);
      if (current === null) return null;
      if (current === cached.version) return normalizeMessageRecords(cached.messages);
    }

    const rows = await sqlRows<{
      version: string;
      type: MessageType | null;
      content: string;
      rag_trace: unknown;
      created_at: Date;
    }>(this.dataSource, `SELECT s.version::text AS version, m.type, m.content, m.rag_trace, m.created_at
         FROM chat_sessions s
         LEFT JOIN chat_messages m ON m.session_id = s.id
        WHERE s.id = $1 AND s.user_id = $2
        ORDER BY m.seq`,
      [sessionId, userId],);
    if (rows.length === 0) return null;
    const records: MessageInfo[] = rows
      .filter((row) => row.type !== null)
      .map((row) => ({
        type: row.type as MessageType,
        content: row.content,
        timestamp: row.created_at.toISOString(),
        rag_trace: normalizeRagTrace(row.rag_trace),
      }));
    await this.cache.set(key, { version: rows[0].version, messages: records } satisfies CachedTranscript);
    return records;
  }

  /** The transcript's current version, or null when the user has no such session. */
  private async transcriptVersion(userId: string, sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ version: string }>(
      this.dataSource,
      'SELECT version::text AS version FROM chat_sessions WHERE id = $1 AND user_id = $2',
      [sessionId, userId],
    );
    return row?.version ?? null;
  }

  private async listVersion(userId: string): Promise<string> {
    const [row] = await sqlRows<{ version: string }>(
      this.dataSource,
      'SELECT version::text AS version FROM chat_user_versions WHERE user_id = $1',
      [userId],
    );
    return row?.version ?? '0';
  }

  /**
   * Opens the session a turn is about to run in: creates it (titled from the
   * message) when it does not exist, so the session exists — for its owner
   * only — from the moment its first turn starts. Throws SessionNotFoundError
   * when it belongs to someone else. `withinTransaction` runs in the same
   * transaction once the session is known to be the user's.
   */
  async openSession(
    userId: string,
    sessionId: string,
    title: string,
    withinTransaction?: (manager: EntityManager) => Promise<void>,
  ): Promise<{ created: boolean }> {
    const opened = await this.dataSource.transaction(async (manager) => {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const [row] = await sqlRows<{ user_id: string; created: boolean }>(
          manager,
          `WITH inserted AS (
             INSERT INTO chat_sessions (id, user_id, title) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO NOTHING RETURNING user_id
           ), bump AS (
             INSERT INTO chat_user_versions (user_id) SELECT $2 FROM inserted
             ON CONFLICT (user_id) DO UPDATE SET version = nextval('chat_cache_version_seq')
           )
           SELECT user_id, true AS created FROM inserted
           UNION ALL
           SELECT user_id, false AS created FROM chat_sessions WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
          [sessionId, userId, this.clampTitle(title)],
        );
        // No row: another request created it after this statement's snapshot was taken; read it again.
        if (!row) continue;
        if (row.user_id !== userId) throw new SessionNotFoundError(sessionId);
        // The turn's claim on the session commits with it: one commit for both.
        await withinTransaction?.(manager);
        return { created: row.created };
      }
      throw new SessionNotFoundError(sessionId);
    });
    // No cache delete here: the list's version moved with the new session, so a cached list is no longer served.
    return opened;
  }

  /** Who owns a session: null when it does not exist. */
  async sessionOwner(sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ user_id: string }>(this.dataSource, 'SELECT user_id FROM chat_sessions WHERE id = $1', [
      sessionId,
    ]);
    return row?.user_id ?? null;
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
    const [session] = await sqlRows<{ metadata: Record<string, unknown>; message_count: number }>(
      this.dataSource,
      'SELECT metadata, message_count FROM chat_sessions WHERE id = $1 AND user_id = $2',
      [sessionId, userId],
    );
    if (!session) return null;
    const rows = await this.messageRows(sessionId, Math.max(afterSeq, session.message_count - limit), session.message_count);
    return { metadata: session.metadata, messageCount: session.message_count, recent: rows };
  }

  /** Messages with fromSeq < seq <= toSeq, in order. */
  async getMessageRange(userId: string, sessionId: string, fromSeq: number, toSeq: number): Promise<MessageInfo[]> {
    if ((await this.sessionOwner(sessionId)) !== userId) return [];
    return this.messageRows(sessionId, fromSeq, toSeq);
  }

  /** The session's metadata, or null when the user has no such session. */
  async sessionMetadata(userId: string, sessionId: string): Promise<Record<string, unknown> | null> {
    const [row] = await sqlRows<{ metadata: Record<string, unknown> }>(
      this.dataSource,
      'SELECT metadata FROM chat_sessions WHERE id = $1 AND user_id = $2',
      [sessionId, userId],
    );
    return row?.metadata ?? null;
  }

  /** Shallow-merges into the session's metadata without touching updated_at. */
  async mergeMetadata(userId: string, sessionId: string, patch: Record<string, unknown>): Promise<void> {
    await this.dataSource.query(
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions SET metadata = metadata || $3::jsonb WHERE id = $1 AND user_id = $2`,
      [sessionId, userId, JSON.stringify(patch)],
    );
    await this.cache.del(sessionsCacheKey(userId));
  }

  /** F19: the history as LangChain messages (empty for an unknown session). */
  async load(userId: string, sessionId: string): Promise<BaseMessage[]> {
    return toLangChainMessages((await this.getSessionMessages(userId, sessionId)) ?? []);
  }

  /** F20: the history and the session's metadata, or null when the user has no such session. */
  async loadWithMeta(
    userId: string,
    sessionId: string,
  ): Promise<{ messages: BaseMessage[]; metadata: Record<string, unknown> } | null> {
    const [messages, [row]] = await Promise.all([
      this.getSessionMessages(userId, sessionId),
      sqlRows<{ metadata: Record<string, unknown> }>(
        this.dataSource,
        `SELECT metadata FROM chat_sessions WHERE id = $1 AND user_id = $2`,
        [sessionId, userId],
      ),
    ]);
    if (!messages || !row) return null;
    return { messages: toLangChainMessages(messages), metadata: row.metadata };
  }

  /** F22: a page of the user's sessions, newest first. The first page is served from the cache. */
  async listSessionInfos(
    userId: string,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<SessionPage> {
    const limit = Math.min(Math.max(page.limit ?? SESSION_PAGE_DEFAULT, 1), SESSION_PAGE_MAX);
    if (page.cursor) {
      const after = decodeCursor(page.cursor);
      const rows = await this.querySessionRows(userId, limit + 1, after);
      return this.toPage(rows, limit);
    }
    const key = sessionsCacheKey(userId);
    const cached = await this.cache.get<CachedSessionHead>(key);
    const version = await this.listVersion(userId);
    if (cached && cached.version === version && Array.isArray(cached.rows)) {
      return this.toPage(
        cached.rows.map((row) => ({ ...row, updated_at: new Date(row.updated_at) })),
        limit,
      );
    }
    // The version is read before the rows: rows newer than it are cached under an old version, which only costs a miss.
    const rows = await this.querySessionRows(userId, SESSION_PAGE_MAX + 1);
    const head: CachedSessionHead = {
      version,
      rows: rows.map((row) => ({ ...row, updated_at: row.updated_at.toISOString() })),
    };
    await this.cache.set(key, head);
    return this.toPage(rows, limit);
  }

  /** F21: ids of all the user's sessions, newest first. */
  async listSessions(userId: string): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(this.dataSource, `SELECT id FROM chat_sessions WHERE user_id = $1 ORDER BY updated_at DESC, id DESC`,
      [userId],);
    return rows.map((row) => row.id);
  }

  /**
   * F24: deletes the session and both cache keys; false when there was none.
   * Its messages and runs go by cascade, and its runs' checkpoints with them
   * (a trigger). A turn still running in it cannot bring it back: its commit
   * finds no session and fails.
   */
  async deleteSession(userId: string, sessionId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(this.dataSource, `WITH ${BUMP_LIST_VERSION}
       DELETE FROM chat_sessions WHERE id = $1 AND user_id = $2 RETURNING id`,
      [sessionId, userId],);
    await this.cache.del(messagesCacheKey(userId, sessionId), sessionsCacheKey(userId));
    return rows.length > 0;
  }

  private async messageRows(sessionId: string, fromSeq: number, toSeq: number): Promise<MessageInfo[]> {
    const rows = await sqlRows<{ type: MessageType; content: string; rag_trace: unknown; created_at: Date }>(
      this.dataSource,
      `SELECT type, content, rag_trace, created_at FROM chat_messages
        WHERE session_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`,
      [sessionId, fromSeq, toSeq],
    );
    return rows.map((row) => ({
      type: row.type,
      content: row.content,
      timestamp: row.created_at.toISOString(),
      rag_trace: normalizeRagTrace(row.rag_trace),
    }));
  }

  private clampTitle(title: string): string {
    return Array.from(title).slice(0, TITLE_MAX_LENGTH).join('');
  }

  private async createSessionIfMissing(
    manager: EntityManager,
    userId: string,
    sessionId: string,
    title: string,
  ): Promise<boolean> {
    const inserted = await sqlRows<{ id: string }>(manager, `INSERT INTO chat_sessions (id, user_id, title) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [sessionId, userId, title],);
    return inserted.length > 0;
  }

  private async insertMessages(
    manager: EntityManager,
    sessionId: string,
    seqs: number[],
    messages: NewMessage[],
  ): Promise<void> {
    if (messages.length === 0) return;
    await manager.query(
      `INSERT INTO chat_messages (session_id, seq, type, content, rag_trace, created_at)
       SELECT $1, t.seq, t.type, t.content, t.rag_trace, clock_timestamp()
         FROM unnest($2::int[], $3::varchar[], $4::text[], $5::jsonb[]) AS t(seq, type, content, rag_trace)`,
      [
        sessionId,
        seqs,
        messages.map((m) => m.type),
        // Edge validation refuses such input; what the model writes is normalized rather than lost.
        messages.map((m) => toStorableText(m.content)),
        messages.map((m) => {
          const trace = normalizeAndValidateRagTrace(m.rag_trace);
          return trace ? JSON.stringify(trace) : null;
        }),
      ],
    );
  }

  private async querySessionRows(
    userId: string,
    take: number,
    after?: { updatedMicros: string; id: string },
  ): Promise<SessionRow[]> {
    const params: unknown[] = [userId, take];
    let keyset = '';
    if (after) {
      params.push(after.updatedMicros, after.id);
      keyset = `AND (updated_at, id) < (TIMESTAMPTZ 'epoch' + $3::bigint * INTERVAL '1 microsecond', $4::uuid)`;
    }
    return await sqlRows<SessionRow>(this.dataSource, `SELECT id, title, updated_at, message_count, metadata->'pending_hitl' AS pending_hitl,
              (EXTRACT(EPOCH FROM updated_at) * 1000000)::bigint::text AS updated_micros
         FROM chat_sessions
        WHERE user_id = $1 ${keyset}
        ORDER BY updated_at DESC, id DESC
        LIMIT $2`,
      params,);
  }

  private toPage(rows: SessionRow[], limit: number): SessionPage {
    const pageRows = rows.slice(0, limit);
    const last = pageRows[pageRows.length - 1];
    return {
      sessions: pageRows.map((row) => ({
        session_id: row.id,
        title: row.title,
        updated_at: row.updated_at.toISOString(),
        message_count: row.message_count,
        pending_hitl: normalizePendingHitl(row.pending_hitl),
      })),
      next_cursor:
        rows.length > limit && last ? encodeCursor({ updatedMicros: last.updated_micros, id: last.id }) : null,
    };
  }
}
