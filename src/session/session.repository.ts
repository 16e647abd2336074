import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../database/sql.js';
import { SessionNotFoundError } from './session.errors.js';
import { SESSION_COLLECTION_IDS_KEY, type SessionRow } from './session-mapping.js';

/**
 * Bumps the user's session-list version. Written as a data-modifying WITH
 * clause of the statement that changes the list, so the bump and the change
 * commit together (the statement runs it whether or not it reads it).
 */
export const BUMP_LIST_VERSION = `bump AS (
  INSERT INTO chat_user_versions (user_id) VALUES ($2)
  ON CONFLICT (user_id) DO UPDATE SET version = nextval('chat_cache_version_seq')
)`;

/** The same bump for the owners of the sessions a statement's `changed` clause returned (`user_id`). */
const BUMP_LIST_VERSIONS_OF_CHANGED = `INSERT INTO chat_user_versions (user_id) SELECT DISTINCT user_id FROM changed
  ON CONFLICT (user_id) DO UPDATE SET version = nextval('chat_cache_version_seq')`;

/** `text` as an ILIKE pattern matching itself anywhere (escape character: backslash). */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface SessionListFilter {
  after?: { updatedMicros: string; id: string };
  titleContains?: string;
  sessionId?: string;
}

/**
 * The `chat_sessions` and `chat_user_versions` tables. Sessions are always
 * addressed with their owner, so another user's session behaves exactly like
 * a missing one. Every statement that changes what a cached copy holds bumps
 * its version in the same statement: the session's `version` for its
 * transcript, the user's `chat_user_versions` row for their list.
 * Methods taking a `manager` run inside the caller's transaction.
 */
@Injectable()
export class SessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Creates the session for its owner when it does not exist (the list
   * version moves with it), else checks that it is the user's. Throws
   * SessionNotFoundError when it belongs to someone else.
   */
  async open(manager: EntityManager, userId: string, sessionId: string, title: string): Promise<{ created: boolean }> {
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
        [sessionId, userId, title],
      );
      // No row: another request created it after this statement's snapshot was taken; read it again.
      if (!row) continue;
      if (row.user_id !== userId) throw new SessionNotFoundError(sessionId);
      return { created: row.created };
    }
    throw new SessionNotFoundError(sessionId);
  }

  /** Inserts the session when its id is free; true when this call created it. */
  async createIfMissing(manager: EntityManager, userId: string, sessionId: string, title: string): Promise<boolean> {
    const inserted = await sqlRows<{ id: string }>(manager, `INSERT INTO chat_sessions (id, user_id, title) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id`, [
      sessionId,
      userId,
      title,
    ]);
    return inserted.length > 0;
  }

  /**
   * Makes room for `count` new messages: bumps the message count (the row
   * lock orders concurrent appends), `updated_at` and both versions, merges
   * the metadata, and sets the title when the session has none. Answers the
   * new message count; null when the user has no such session.
   */
  async recordAppend(manager: EntityManager, userId: string, sessionId: string, count: number, metadata: Record<string, unknown>, title: string): Promise<number | null> {
    const [row] = await sqlRows<{ message_count: number }>(
      manager,
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions
          SET message_count = message_count + $3,
              updated_at = clock_timestamp(),
              version = nextval('chat_cache_version_seq'),
              metadata = metadata || $4::jsonb,
              title = CASE WHEN title = '' THEN $5 ELSE title END
        WHERE id = $1 AND user_id = $2
      RETURNING message_count`,
      [sessionId, userId, count, JSON.stringify(metadata), title],
    );
    return row?.message_count ?? null;
  }

  /** Who owns a session: null when it does not exist. */
  async owner(sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ user_id: string }>(this.dataSource, 'SELECT user_id FROM chat_sessions WHERE id = $1', [sessionId]);
    return row?.user_id ?? null;
  }

  /** The session's metadata and message count, or null when the user has no such session. */
  async head(userId: string, sessionId: string): Promise<{ metadata: Record<string, unknown>; message_count: number } | null> {
    const [row] = await sqlRows<{ metadata: Record<string, unknown>; message_count: number }>(
      this.dataSource,
      'SELECT metadata, message_count FROM chat_sessions WHERE id = $1 AND user_id = $2',
      [sessionId, userId],
    );
    return row ?? null;
  }

  /** Shallow-merges into the session's metadata without touching updated_at. */
  async mergeMetadata(userId: string, sessionId: string, patch: Record<string, unknown>): Promise<void> {
    await this.dataSource.query(
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions SET metadata = metadata || $3::jsonb WHERE id = $1 AND user_id = $2`,
      [sessionId, userId, JSON.stringify(patch)],
    );
  }

  /** The transcript's current version, or null when the user has no such session. */
  async transcriptVersion(userId: string, sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ version: string }>(this.dataSource, 'SELECT version::text AS version FROM chat_sessions WHERE id = $1 AND user_id = $2', [sessionId, userId]);
    return row?.version ?? null;
  }

  /** These users' session-list versions, in the order asked ('0' before a user's first session). */
  async listVersions(userIds: readonly string[]): Promise<string[]> {
    const rows = await sqlRows<{ user_id: string; version: string }>(
      this.dataSource,
      'SELECT user_id, version::text AS version FROM chat_user_versions WHERE user_id = ANY($1::varchar[])',
      [[...new Set(userIds)]],
    );
    const versions = new Map(rows.map((row) => [row.user_id, row.version]));
    return userIds.map((userId) => versions.get(userId) ?? '0');
  }

  /** The user's sessions newest first, after a cursor, matching a title, or one by id. */
  async list(userId: string, take: number, filter: SessionListFilter = {}): Promise<SessionRow[]> {
    return (await this.listOn(this.dataSource, userId, take, filter)).value;
  }

  /**
   * The same list read on `db`; on another data source than the primary's
   * (the read replica), with the user's list version as it holds it in the
   * same snapshot (null when it has no row for the user).
   */
  async listOn(db: DataSource, userId: string, take: number, filter: SessionListFilter = {}): Promise<{ versions: [string | null]; value: SessionRow[] }> {
    const params: unknown[] = [userId, take];
    const conditions: string[] = [];
    if (filter.after) {
      params.push(filter.after.updatedMicros, filter.after.id);
      conditions.push(`(s.updated_at, s.id) < (TIMESTAMPTZ 'epoch' + $${params.length - 1}::bigint * INTERVAL '1 microsecond', $${params.length}::uuid)`);
    }
    if (filter.titleContains !== undefined) {
      params.push(containsPattern(filter.titleContains));
      conditions.push(`s.title ILIKE $${params.length} ESCAPE '\\'`);
    }
    if (filter.sessionId !== undefined) {
      params.push(filter.sessionId);
      conditions.push(`s.id = $${params.length}`);
    }
    const list = `SELECT s.id, s.title, s.created_at, s.updated_at, s.message_count, s.metadata->'pending_hitl' AS pending_hitl,
              s.metadata->'${SESSION_COLLECTION_IDS_KEY}' AS collection_ids,
              (EXTRACT(EPOCH FROM s.updated_at) * 1000000)::bigint::text AS updated_micros,
              s.active_run_id::text AS active_run_id, s.active_run_started_at
         FROM chat_sessions s
        WHERE s.user_id = $1 ${conditions.map((condition) => `AND ${condition}`).join(' ')}
        ORDER BY s.updated_at DESC, s.id DESC
        LIMIT $2`;
    if (db === this.dataSource) return { versions: [null], value: await sqlRows<SessionRow>(db, list, params) };
    // Elsewhere (a replica), with the list version in the same snapshot, an empty list included: the list joined to its one-row select.
    const rows = await sqlRows<Partial<SessionRow> & { list_version: string | null }>(
      db,
      `SELECT v.list_version, l.*
         FROM (SELECT (SELECT version::text FROM chat_user_versions WHERE user_id = $1) AS list_version) v
         LEFT JOIN LATERAL (${list}) l ON true
        ORDER BY l.updated_at DESC, l.id DESC`,
      params,
    );
    const version = rows[0]?.list_version ?? null;
    const sessions = rows.flatMap(({ list_version: _, ...row }) => (row.id == null ? [] : [row as SessionRow]));
    return { versions: [version], value: sessions };
  }

  /**
   * Sets the title (when given) and the saved collections (when given; null
   * removes them) in one statement; false when the user has no such session.
   * `updated_at` stays: neither moves the session up the list.
   */
  async update(userId: string, sessionId: string, changes: { title?: string; collectionIds?: string[] | null }): Promise<boolean> {
    const collections = changes.collectionIds === undefined ? 'metadata' : changes.collectionIds === null ? `metadata - '${SESSION_COLLECTION_IDS_KEY}'` : `metadata || $4::jsonb`;
    const updated = await sqlRows<{ id: string }>(
      this.dataSource,
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions SET title = COALESCE($3, title), metadata = ${collections} WHERE id = $1 AND user_id = $2 RETURNING id`,
      [sessionId, userId, changes.title ?? null, ...(changes.collectionIds ? [JSON.stringify({ [SESSION_COLLECTION_IDS_KEY]: changes.collectionIds })] : [])],
    );
    return updated.length > 0;
  }

  /** Deletes the session (its messages and runs go by cascade); false when the user had no such session. */
  async delete(userId: string, sessionId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `WITH ${BUMP_LIST_VERSION}
       DELETE FROM chat_sessions WHERE id = $1 AND user_id = $2 RETURNING id`,
      [sessionId, userId],
    );
    return rows.length > 0;
  }

  /**
   * Locks the sessions' rows until the transaction ends, in one order: a
   * transaction that ends runs takes its sessions first, as a turn's commit
   * and a delete do, so the two never wait for each other in a circle.
   */
  async lock(manager: EntityManager, sessionIds: string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await manager.query('SELECT id FROM chat_sessions WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [sessionIds]);
  }

  /** Names the session's run in flight (started now, the transaction's time) and moves its owner's list version. */
  async setActiveRun(manager: EntityManager, sessionId: string, runId: string): Promise<void> {
    await manager.query(
      `WITH changed AS (
         UPDATE chat_sessions SET active_run_id = $2, active_run_started_at = now() WHERE id = $1 RETURNING user_id
       )
       ${BUMP_LIST_VERSIONS_OF_CHANGED}`,
      [sessionId, runId],
    );
  }

  /** Clears each session's run in flight where it is still the given run, moving their owners' list versions. */
  async clearActiveRuns(manager: EntityManager, ended: Array<{ sessionId: string; runId: string }>): Promise<void> {
    if (ended.length === 0) return;
    await manager.query(
      `WITH changed AS (
         UPDATE chat_sessions s SET active_run_id = NULL, active_run_started_at = NULL
           FROM unnest($1::uuid[], $2::uuid[]) AS e(session_id, run_id)
          WHERE s.id = e.session_id AND s.active_run_id = e.run_id
         RETURNING s.user_id
       )
       ${BUMP_LIST_VERSIONS_OF_CHANGED}`,
      [ended.map((e) => e.sessionId), ended.map((e) => e.runId)],
    );
  }
}
