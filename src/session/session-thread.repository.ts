import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../database/sql.js';
import { normalizePendingHitl } from '../trace/trace.normalizer.js';
import type { PendingHitlState } from '../trace/trace.protocol.js';
import { BUMP_LIST_VERSION } from './session.repository.js';

/** The session metadata key under which a client's own metadata for the session is kept (LangGraph's thread metadata). */
export const CLIENT_METADATA_KEY = 'client_metadata';

/** How a session stands for a client that sees it as a thread. */
export type SessionThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';
export const SESSION_THREAD_STATUSES: readonly SessionThreadStatus[] = ['idle', 'busy', 'interrupted', 'error'];

export const THREAD_SORT_COLUMNS = ['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'] as const;
export type ThreadSortColumn = (typeof THREAD_SORT_COLUMNS)[number];

/** A session as a thread: its times, the client's metadata, and what its status is made of. */
export interface SessionThread {
  session_id: string;
  created_at: Date;
  updated_at: Date;
  client_metadata: Record<string, unknown>;
  status: SessionThreadStatus;
  active_run_id: string | null;
  pending_hitl: PendingHitlState | null;
  message_count: number;
}

export interface SessionThreadFilter {
  ids?: string[];
  /** JSONB containment on the client metadata. */
  metadata?: Record<string, unknown>;
  status?: SessionThreadStatus;
  limit: number;
  offset: number;
  sortBy: ThreadSortColumn;
  sortOrder: 'asc' | 'desc';
}

/** busy: a run in flight; interrupted: a question waits for the user; error: the last turn failed (its message kept, marked failed). */
const STATUS_SQL = `CASE
  WHEN s.active_run_id IS NOT NULL THEN 'busy'
  WHEN s.metadata ? 'pending_hitl' AND s.metadata->'pending_hitl' <> 'null'::jsonb THEN 'interrupted'
  WHEN (SELECT m.status FROM chat_messages m WHERE m.session_id = s.id AND m.seq = s.message_count) = 'failed' THEN 'error'
  ELSE 'idle' END`;

const SORT_SQL: Record<ThreadSortColumn, string> = {
  thread_id: 's.id',
  status: 'status',
  created_at: 's.created_at',
  updated_at: 's.updated_at',
  state_updated_at: 's.updated_at',
};

interface ThreadRow {
  session_id: string;
  created_at: Date;
  updated_at: Date;
  client_metadata: unknown;
  status: SessionThreadStatus;
  active_run_id: string | null;
  pending_hitl: unknown;
  message_count: number;
}

/** The `chat_sessions` rows as threads (SessionThreads): the client metadata key of their metadata, and their status. */
@Injectable()
export class SessionThreadRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Creates an empty session with the client's metadata; `exists` when the id is taken (by this user or another). */
  async create(userId: string, sessionId: string, metadata: Record<string, unknown>): Promise<'created' | 'exists'> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `WITH inserted AS (
         INSERT INTO chat_sessions (id, user_id, title, metadata) VALUES ($1, $2, '', jsonb_build_object('${CLIENT_METADATA_KEY}', $3::jsonb))
         ON CONFLICT (id) DO NOTHING RETURNING id, user_id
       ), bump AS (
         INSERT INTO chat_user_versions (user_id) SELECT user_id FROM inserted
         ON CONFLICT (user_id) DO UPDATE SET version = nextval('chat_cache_version_seq')
       )
       SELECT id FROM inserted`,
      [sessionId, userId, JSON.stringify(metadata)],
    );
    return rows.length === 0 ? 'exists' : 'created';
  }

  /** Shallow-merges into the client metadata, unless the result's JSON would be over `maxBytes`. */
  async mergeMetadata(userId: string, sessionId: string, patch: Record<string, unknown>, maxBytes: number): Promise<'merged' | 'missing' | 'too_large'> {
    const merged = `COALESCE(metadata->'${CLIENT_METADATA_KEY}', '{}'::jsonb) || $3::jsonb`;
    const [row] = await sqlRows<{ fits: boolean }>(
      this.dataSource,
      `WITH target AS (SELECT id, octet_length((${merged})::text) <= $4 AS fits FROM chat_sessions WHERE id = $1 AND user_id = $2 FOR UPDATE),
       changed AS (
         UPDATE chat_sessions s SET metadata = jsonb_set(s.metadata, '{${CLIENT_METADATA_KEY}}', ${merged.replace(/metadata->/g, 's.metadata->')})
           FROM target WHERE s.id = target.id AND target.fits RETURNING s.id
       )
       SELECT fits FROM target`,
      [sessionId, userId, JSON.stringify(patch), maxBytes],
    );
    return !row ? 'missing' : row.fits ? 'merged' : 'too_large';
  }

  /** Merges keys into the client metadata only where they are absent (a run names its graph and assistant on its thread). */
  async addMissingMetadata(userId: string, sessionId: string, defaults: Record<string, unknown>): Promise<void> {
    await this.dataSource.query(
      `UPDATE chat_sessions
          SET metadata = jsonb_set(metadata, '{${CLIENT_METADATA_KEY}}', $3::jsonb || COALESCE(metadata->'${CLIENT_METADATA_KEY}', '{}'::jsonb))
        WHERE id = $1 AND user_id = $2 AND NOT (COALESCE(metadata->'${CLIENT_METADATA_KEY}', '{}'::jsonb) ?& $4::text[])`,
      [sessionId, userId, JSON.stringify(defaults), Object.keys(defaults)],
    );
  }

  /**
   * Removes what a cancelled run kept (its messages marked `cancelled`) when they are the last of the transcript, and
   * gives their sequence numbers back; the number of messages removed (0 when there were none, or others came after).
   */
  async removeCancelledRun(userId: string, sessionId: string, runId: string): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [session] = await sqlRows<{ message_count: number }>(manager, 'SELECT message_count FROM chat_sessions WHERE id = $1 AND user_id = $2 FOR UPDATE', [sessionId, userId]);
      if (!session) return 0;
      const [range] = await sqlRows<{ from_seq: number | null; others_after: boolean }>(
        manager,
        `SELECT min(seq) AS from_seq,
                EXISTS (SELECT 1 FROM chat_messages o WHERE o.session_id = $1 AND o.seq >= min(m.seq) AND (o.run_id IS DISTINCT FROM $2 OR o.status <> 'cancelled')) AS others_after
           FROM chat_messages m WHERE m.session_id = $1 AND m.run_id = $2`,
        [sessionId, runId],
      );
      if (range?.from_seq == null || range.others_after) return 0;
      return this.truncateLocked(manager, userId, sessionId, range.from_seq - 1, []);
    });
  }

  /**
   * Cuts the transcript back to its first `keepSeq` messages (the later ones are deleted and their sequence numbers
   * given back) and removes `metadataKeys` from the session's metadata; the number of messages removed, or null when
   * the user has no such session.
   */
  async truncate(userId: string, sessionId: string, keepSeq: number, metadataKeys: string[]): Promise<number | null> {
    return this.dataSource.transaction(async (manager) => {
      const [session] = await sqlRows<{ id: string }>(manager, 'SELECT id FROM chat_sessions WHERE id = $1 AND user_id = $2 FOR UPDATE', [sessionId, userId]);
      if (!session) return null;
      return this.truncateLocked(manager, userId, sessionId, keepSeq, metadataKeys);
    });
  }

  private async truncateLocked(manager: EntityManager, userId: string, sessionId: string, keepSeq: number, metadataKeys: string[]): Promise<number> {
    const removed = await sqlRows<{ seq: number }>(manager, 'DELETE FROM chat_messages WHERE session_id = $1 AND seq > $2 RETURNING seq', [sessionId, keepSeq]);
    await manager.query(
      `WITH ${BUMP_LIST_VERSION}
       UPDATE chat_sessions SET message_count = $3, version = nextval('chat_cache_version_seq'), updated_at = clock_timestamp(), metadata = metadata - $4::text[]
        WHERE id = $1 AND user_id = $2`,
      [sessionId, userId, keepSeq, metadataKeys],
    );
    return removed.length;
  }

  /** How many of the user's sessions match. */
  async count(userId: string, filter: SessionThreadMatch): Promise<number> {
    const { params, where } = whereOf(userId, filter);
    const [row] = await sqlRows<{ n: number }>(this.dataSource, `SELECT count(*)::int AS n FROM chat_sessions s WHERE ${where}`, params);
    return row.n;
  }

  /** The user's sessions as threads, filtered, sorted and paged. */
  async search(userId: string, filter: SessionThreadFilter): Promise<SessionThread[]> {
    const { params, where } = whereOf(userId, filter);
    params.push(filter.limit, filter.offset);
    const order = filter.sortOrder === 'asc' ? 'ASC' : 'DESC';
    const rows = await sqlRows<ThreadRow>(
      this.dataSource,
      `SELECT s.id::text AS session_id, s.created_at, s.updated_at, s.metadata->'${CLIENT_METADATA_KEY}' AS client_metadata,
              ${STATUS_SQL} AS status, s.active_run_id::text AS active_run_id, s.metadata->'pending_hitl' AS pending_hitl, s.message_count
         FROM chat_sessions s
        WHERE ${where}
        ORDER BY ${SORT_SQL[filter.sortBy]} ${order}, s.id ${order}
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map((row) => ({
      session_id: row.session_id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      client_metadata: isRecord(row.client_metadata) ? row.client_metadata : {},
      status: row.status,
      active_run_id: row.active_run_id,
      pending_hitl: row.status === 'interrupted' ? normalizePendingHitl(row.pending_hitl) : null,
      message_count: row.message_count,
    }));
  }
}

/** How many of the user's sessions match the filter (its paging aside). */
export type SessionThreadMatch = Pick<SessionThreadFilter, 'ids' | 'metadata' | 'status'>;

function whereOf(userId: string, filter: SessionThreadMatch): { params: unknown[]; where: string } {
  const params: unknown[] = [userId];
  const conditions = ['s.user_id = $1'];
  if (filter.ids) {
    params.push(filter.ids);
    conditions.push(`s.id = ANY($${params.length}::uuid[])`);
  }
  if (filter.metadata && Object.keys(filter.metadata).length > 0) {
    params.push(JSON.stringify(filter.metadata));
    conditions.push(`COALESCE(s.metadata->'${CLIENT_METADATA_KEY}', '{}'::jsonb) @> $${params.length}::jsonb`);
  }
  if (filter.status) {
    params.push(filter.status);
    conditions.push(`(${STATUS_SQL}) = $${params.length}`);
  }
  return { params, where: conditions.join(' AND ') };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
