import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ResilientCache } from '../cache/resilient-cache.service.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { transactionKnowingCommit } from '../database/commit-outcome.js';
import { sqlRows } from '../database/sql.js';
import {
  FeedbackRating,
  MessageInfo,
  MessageStatus,
  MessageType,
  SESSION_PAGE_DEFAULT,
  SESSION_PAGE_MAX,
  SessionInfo,
  TITLE_MAX_LENGTH,
} from './session.dto.js';
import { normalizeAndValidateRagTrace, normalizePendingHitl, normalizeRagTrace } from '../trace/trace.normalizer.js';
import { toStorableText } from '../common/storable-text.js';
import { decodeCursor, encodeCursor } from './session-cursor.js';
import { SessionNotFoundError } from './session.errors.js';

export { TITLE_MAX_LENGTH };

/** A message to store; `rag_trace` is normalized before it is written. */
export interface NewMessage {
  type: MessageType;
  content: string;
  rag_trace?: unknown;
  /** `complete` unless given: what a cancelled or failed turn keeps says so. */
  status?: MessageStatus;
  /** The run that stores the message. */
  run_id?: string;
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

export interface MessagePage {
  messages: MessageInfo[];
  /** The seq to pass as `before` for the older page; null when the page starts the conversation. */
  next_before: number | null;
}

interface SessionRow {
  id: string;
  title: string;
  created_at: Date;
  updated_at: Date;
  updated_micros: string;
  message_count: number;
  pending_hitl: unknown;
  /** The running run, read with the row and never cached. */
  active_run_id: string | null;
  active_run_started_at: Date | null;
}

interface MessageRow {
  id: string;
  seq: number;
  type: MessageType;
  status: MessageStatus;
  run_id: string | null;
  content: string;
  rag_trace: unknown;
  created_at: Date;
  feedback_rating: FeedbackRating | null;
  feedback_comment: string | null;
  feedback_updated_at: Date | null;
}

/**
 * The shape of what the caches hold: a cached copy in any other shape (written
 * by an older version of the service) is a miss, whatever its version says.
 */
const CACHE_FORMAT = 2;

type CachedSessionRow = Omit<SessionRow, 'created_at' | 'updated_at' | 'active_run_id' | 'active_run_started_at'> & {
  created_at: string;
  updated_at: string;
};

/** What the session-list cache holds: the head of the list, one row more than a page can ask for, at a list version. */
interface CachedSessionHead {
  format: typeof CACHE_FORMAT;
  version: string;
  rows: CachedSessionRow[];
}

/** What the transcript cache holds: the messages at a transcript version. */
interface CachedTranscript {
  format: typeof CACHE_FORMAT;
  version: string;
  messages: MessageInfo[];
}

/** The columns a MessageRow is read from, on `chat_messages` aliased `m`. */
const MESSAGE_COLUMNS = `m.public_id::text AS id, m.seq, m.type, m.status, m.run_id::text AS run_id, m.content, m.rag_trace,
  m.created_at, m.feedback_rating, m.feedback_comment, m.feedback_updated_at`;

function toMessageInfo(row: MessageRow): MessageInfo {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    status: row.status,
    run_id: row.run_id,
    content: row.content,
    timestamp: row.created_at.toISOString(),
    rag_trace: normalizeRagTrace(row.rag_trace),
    feedback:
      row.feedback_rating && row.feedback_updated_at
        ? { rating: row.feedback_rating, comment: row.feedback_comment, updated_at: row.feedback_updated_at.toISOString() }
        : null,
  };
}

/** `text` as an ILIKE pattern matching itself anywhere (escape character: backslash). */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
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

/**
 * A running run counts as active while its heartbeat is fresh: one whose
 * instance died is given up after RUN_STALE_AFTER_MS (`$n`, milliseconds), as
 * the run registry does, and rejoining it would only answer `run_lost`.
 */
const ACTIVE_RUN_FRESH = (run: string, staleAfterMs: string) =>
  `${run}.heartbeat_at >= now() - ${staleAfterMs}::int * INTERVAL '1 millisecond'`;

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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
    // A COMMIT without an answer throws CommitOutcomeUnknownError: the caller finds out what landed.
    const result = await transactionKnowingCommit(this.dataSource, async (manager) => {
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
    const cached = await this.currentCachedTranscript(userId, sessionId);
    if (cached === null) return null;
    if (cached) return cached;

    const rows = await sqlRows<{ version: string } & (MessageRow | { [K in keyof MessageRow]: null })>(
      this.dataSource,
      `SELECT s.version::text AS version, ${MESSAGE_COLUMNS}
         FROM chat_sessions s
         LEFT JOIN chat_messages m ON m.session_id = s.id
        WHERE s.id = $1 AND s.user_id = $2
        ORDER BY m.seq`,
      [sessionId, userId],
    );
    if (rows.length === 0) return null;
    const records: MessageInfo[] = rows.filter((row): row is { version: string } & MessageRow => row.id !== null).map(toMessageInfo);
    await this.cache.set(key, { format: CACHE_FORMAT, version: rows[0].version, messages: records } satisfies CachedTranscript);
    return records;
  }

  /**
   * A page of the transcript: the last `limit` messages before seq `before`
   * (all of them without `limit`, up to the newest without `before`), in
   * conversation order. Served from the cached transcript when it is current,
   * else the page alone is read. Null when the user has no such session.
   */
  async getSessionMessagePage(
    userId: string,
    sessionId: string,
    page: { before?: number; limit?: number } = {},
  ): Promise<MessagePage | null> {
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
    const rows = await sqlRows<{ found: boolean } & (MessageRow | { [K in keyof MessageRow]: null })>(
      this.dataSource,
      `SELECT true AS found, p.*
         FROM chat_sessions s
         LEFT JOIN LATERAL (
           SELECT ${MESSAGE_COLUMNS} FROM chat_messages m
            WHERE m.session_id = s.id AND m.seq < $3
            ORDER BY m.seq DESC
            LIMIT $4
         ) p ON true
        WHERE s.id = $1 AND s.user_id = $2`,
      [sessionId, userId, page.before ?? 2 ** 31 - 1, page.limit === undefined ? null : page.limit + 1],
    );
    if (rows.length === 0) return null;
    const newestFirst = rows.filter((row): row is { found: boolean } & MessageRow => row.id !== null).map(toMessageInfo);
    const hasOlder = page.limit !== undefined && newestFirst.length > page.limit;
    const messages = newestFirst.slice(0, page.limit).reverse();
    return { messages, next_before: hasOlder ? messages[0].seq : null };
  }

  /**
   * The cached transcript when its version is the current one; undefined when
   * there is none (or it is out of date); null when the user has no such session.
   */
  private async currentCachedTranscript(userId: string, sessionId: string): Promise<MessageInfo[] | null | undefined> {
    const cached = await this.cache.get<CachedTranscript>(messagesCacheKey(userId, sessionId));
    if (!cached || cached.format !== CACHE_FORMAT || typeof cached.version !== 'string' || !Array.isArray(cached.messages)) {
      return undefined;
    }
    const current = await this.transcriptVersion(userId, sessionId);
    if (current === null) return null;
    return current === cached.version ? normalizeMessageRecords(cached.messages) : undefined;
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

  /**
   * The user's session-list version and the runs in flight in their sessions,
   * in one round trip: the list is cached, its running runs never are.
   */
  private async listVersionAndActiveRuns(userId: string): Promise<{ version: string; runs: Map<string, { run_id: string; started_at: string }> }> {
    // Two plain index lookups in one statement: cheaper to plan than scalar subqueries with json_agg.
    const rows = await sqlRows<{ version: string | null; session_id: string | null; run_id: string | null; started_at: Date | null }>(
      this.dataSource,
      `SELECT version::text AS version, NULL::uuid AS session_id, NULL::uuid AS run_id, NULL::timestamptz AS started_at
         FROM chat_user_versions WHERE user_id = $1
       UNION ALL
       SELECT NULL, r.session_id, r.id, r.created_at
         FROM chat_runs r
        WHERE r.user_id = $1 AND r.status = 'running' AND ${ACTIVE_RUN_FRESH('r', '$2')}`,
      [userId, this.config.chat.runStaleAfterMs],
    );
    let version = '0';
    const runs = new Map<string, { run_id: string; started_at: string }>();
    for (const row of rows) {
      if (row.version !== null) version = row.version;
      else if (row.session_id && row.run_id && row.started_at) {
        runs.set(row.session_id, { run_id: row.run_id, started_at: row.started_at.toISOString() });
      }
    }
    return { version, runs };
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
    const opened = await transactionKnowingCommit(this.dataSource, async (manager) => {
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

  /**
   * F22: a page of the user's sessions, newest first, optionally only those
   * whose title contains `q`. The first page without `q` is served from the
   * cache; `active_run` is read from the database every time.
   */
  async listSessionInfos(
    userId: string,
    page: { limit?: number; cursor?: string; q?: string } = {},
  ): Promise<SessionPage> {
    const limit = Math.min(Math.max(page.limit ?? SESSION_PAGE_DEFAULT, 1), SESSION_PAGE_MAX);
    const titleContains = page.q ? page.q : undefined;
    if (page.cursor || titleContains !== undefined) {
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      const rows = await this.querySessionRows(userId, limit + 1, { after, titleContains });
      return this.toPage(rows, limit);
    }
    const key = sessionsCacheKey(userId);
    const cached = await this.cache.get<CachedSessionHead>(key);
    const { version, runs } = await this.listVersionAndActiveRuns(userId);
    if (cached && cached.format === CACHE_FORMAT && cached.version === version && Array.isArray(cached.rows)) {
      return this.toPage(
        cached.rows.map((row) => {
          const run = runs.get(row.id);
          return {
            ...row,
            created_at: new Date(row.created_at),
            updated_at: new Date(row.updated_at),
            active_run_id: run?.run_id ?? null,
            active_run_started_at: run ? new Date(run.started_at) : null,
          };
        }),
        limit,
      );
    }
    // The version is read before the rows: rows newer than it are cached under an old version, which only costs a miss.
    const rows = await this.querySessionRows(userId, SESSION_PAGE_MAX + 1);
    const head: CachedSessionHead = {
      format: CACHE_FORMAT,
      version,
      rows: rows.map(({ active_run_id: _run, active_run_started_at: _started, ...row }) => ({
        ...row,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      })),
    };
    await this.cache.set(key, head);
    return this.toPage(rows, limit);
  }

  /**
   * Renames the user's session (the title is stored as given: the caller
   * trims and validates it) and returns it; null when the user has no such
   * session. The list version moves in the same statement. `updated_at` stays:
   * a rename does not move the session up the list.
   */
  /** One of the user's sessions, its `active_run` read from the database; null when the user has no such session. */
  async getSessionInfo(userId: string, sessionId: string): Promise<SessionInfo | null> {
    const rows = await this.querySessionRows(userId, 1, { sessionId });
    return rows.length > 0 ? this.toPage(rows, 1).sessions[0] : null;
  }

  async renameSession(userId: string, sessionId: string, title: string): Promise<SessionInfo | null> {
    const renamed = await sqlRows<{ id: string }>(
      this.dataSource,
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions SET title = $3 WHERE id = $1 AND user_id = $2 RETURNING id`,
      [sessionId, userId, this.clampTitle(title)],
    );
    if (renamed.length === 0) return null;
    await this.cache.del(sessionsCacheKey(userId));
    const rows = await this.querySessionRows(userId, 1, { sessionId });
    return rows.length > 0 ? this.toPage(rows, 1).sessions[0] : null;
  }

  /**
   * Sets (or, with null, clears) the owner's feedback on one message of the
   * session and returns the message; null when the user has no such session
   * or the message is not in it. The transcript version moves in the same statement.
   */
  async setMessageFeedback(
    userId: string,
    sessionId: string,
    messageId: string,
    feedback: { rating: FeedbackRating; comment: string | null } | null,
  ): Promise<MessageInfo | null> {
    const [row] = await sqlRows<MessageRow>(
      this.dataSource,
      `WITH session AS (
         UPDATE chat_sessions SET version = nextval('chat_cache_version_seq')
          WHERE id = $1 AND user_id = $2
            AND EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1 AND public_id = $3)
         RETURNING id
       )
       UPDATE chat_messages m
          SET feedback_rating = $4::varchar,
              feedback_comment = $5::text,
              feedback_updated_at = CASE WHEN $4::varchar IS NULL THEN NULL ELSE clock_timestamp() END
         FROM session
        WHERE m.session_id = session.id AND m.public_id = $3
       RETURNING ${MESSAGE_COLUMNS}`,
      [sessionId, userId, messageId, feedback?.rating ?? null, feedback?.comment ?? null],
    );
    if (!row) return null;
    await this.cache.del(messagesCacheKey(userId, sessionId));
    return toMessageInfo(row);
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
    const rows = await sqlRows<MessageRow>(
      this.dataSource,
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m
        WHERE m.session_id = $1 AND m.seq > $2 AND m.seq <= $3 ORDER BY m.seq`,
      [sessionId, fromSeq, toSeq],
    );
    return rows.map(toMessageInfo);
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
      `INSERT INTO chat_messages (session_id, seq, type, content, rag_trace, status, run_id, created_at)
       SELECT $1, t.seq, t.type, t.content, t.rag_trace, t.status, t.run_id, clock_timestamp()
         FROM unnest($2::int[], $3::varchar[], $4::text[], $5::jsonb[], $6::varchar[], $7::uuid[])
              AS t(seq, type, content, rag_trace, status, run_id)`,
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
        messages.map((m) => m.status ?? 'complete'),
        messages.map((m) => m.run_id ?? null),
      ],
    );
  }

  /** The user's sessions newest first, each with its fresh running run, after a cursor, matching a title, or one by id. */
  private async querySessionRows(
    userId: string,
    take: number,
    filter: { after?: { updatedMicros: string; id: string }; titleContains?: string; sessionId?: string } = {},
  ): Promise<SessionRow[]> {
    const params: unknown[] = [userId, take, this.config.chat.runStaleAfterMs];
    const conditions: string[] = [];
    if (filter.after) {
      params.push(filter.after.updatedMicros, filter.after.id);
      conditions.push(
        `(s.updated_at, s.id) < (TIMESTAMPTZ 'epoch' + $${params.length - 1}::bigint * INTERVAL '1 microsecond', $${params.length}::uuid)`,
      );
    }
    if (filter.titleContains !== undefined) {
      params.push(containsPattern(filter.titleContains));
      conditions.push(`s.title ILIKE $${params.length} ESCAPE '\\'`);
    }
    if (filter.sessionId !== undefined) {
      params.push(filter.sessionId);
      conditions.push(`s.id = $${params.length}`);
    }
    return await sqlRows<SessionRow>(
      this.dataSource,
      `SELECT s.id, s.title, s.created_at, s.updated_at, s.message_count, s.metadata->'pending_hitl' AS pending_hitl,
              (EXTRACT(EPOCH FROM s.updated_at) * 1000000)::bigint::text AS updated_micros,
              r.id::text AS active_run_id, r.created_at AS active_run_started_at
         FROM chat_sessions s
         LEFT JOIN chat_runs r ON r.session_id = s.id AND r.status = 'running' AND ${ACTIVE_RUN_FRESH('r', '$3')}
        WHERE s.user_id = $1 ${conditions.map((condition) => `AND ${condition}`).join(' ')}
        ORDER BY s.updated_at DESC, s.id DESC
        LIMIT $2`,
      params,
    );
  }

  private toPage(rows: SessionRow[], limit: number): SessionPage {
    const pageRows = rows.slice(0, limit);
    const last = pageRows[pageRows.length - 1];
    return {
      sessions: pageRows.map((row) => ({
        session_id: row.id,
        title: row.title,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        message_count: row.message_count,
        pending_hitl: normalizePendingHitl(row.pending_hitl),
        active_run:
          row.active_run_id && row.active_run_started_at
            ? { run_id: row.active_run_id, started_at: row.active_run_started_at.toISOString() }
            : null,
      })),
      next_cursor:
        rows.length > limit && last ? encodeCursor({ updatedMicros: last.updated_micros, id: last.id }) : null,
    };
  }
}
