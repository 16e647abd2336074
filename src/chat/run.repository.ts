import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../database/sql.js';

export const RUN_STATUSES = ['running', 'done', 'error', 'interrupted', 'abandoned', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunRecord {
  id: string;
  session_id: string;
  user_id: string;
  status: RunStatus;
}

export interface RunRow {
  run_id: string;
  session_id: string;
  status: RunStatus;
  started_at: Date;
  finished_at: Date | null;
  message: string | null;
}

/** A run that was ended, and the session it held. */
export interface EndedRun {
  runId: string;
  sessionId: string;
}

/**
 * The one rule for a stale run: its heartbeat is older than RUN_STALE_AFTER_MS
 * (`staleAfterMs`, a parameter in milliseconds). Its instance died, or could
 * not reach the database for that long: any instance may give it up.
 */
const STALE = (staleAfterMs: string) => `heartbeat_at < now() - ${staleAfterMs}::int * INTERVAL '1 millisecond'`;

/** How a stale run is given up (its checkpoints go with it, see the migration AbandonedRunsForgetCheckpoints). */
const GIVE_UP = `status = 'abandoned', finished_at = now(), error = 'no heartbeat'`;

/**
 * The `chat_runs` table: one run in flight per session across every
 * instance (a partial unique index). Methods taking a `manager` run inside
 * the caller's transaction.
 */
@Injectable()
export class RunRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts the session's running run; a unique violation means a run is in flight there. */
  async insertRunning(manager: EntityManager, runId: string, sessionId: string, userId: string, message: string): Promise<void> {
    await manager.query(`INSERT INTO chat_runs (id, session_id, user_id, status, message) VALUES ($1, $2, $3, 'running', $4)`, [runId, sessionId, userId, message]);
  }

  /** The sessions that hold a stale running run (of one session, or of any): a read without locks. */
  async sessionsWithStaleRuns(staleAfterMs: number, sessionId?: string): Promise<string[]> {
    const rows = await sqlRows<{ session_id: string }>(
      this.dataSource,
      `SELECT session_id FROM chat_runs
        WHERE status = 'running' AND ${STALE('$1')} AND ($2::uuid IS NULL OR session_id = $2::uuid)`,
      [staleAfterMs, sessionId ?? null],
    );
    return rows.map((row) => row.session_id);
  }

  /** Gives up the running runs of these sessions whose heartbeat is stale; answers those given up. */
  async giveUpStaleIn(manager: EntityManager, sessionIds: string[], staleAfterMs: number): Promise<EndedRun[]> {
    const rows = await sqlRows<{ id: string; session_id: string }>(
      manager,
      `UPDATE chat_runs SET ${GIVE_UP}
        WHERE session_id = ANY($1::uuid[]) AND status = 'running' AND ${STALE('$2')}
      RETURNING id, session_id`,
      [sessionIds, staleAfterMs],
    );
    return rows.map((row) => ({ runId: row.id, sessionId: row.session_id }));
  }

  /** Gives up the run when it is running with a stale heartbeat; true when it was. */
  async giveUpIfStale(manager: EntityManager, runId: string, staleAfterMs: number): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(manager, `UPDATE chat_runs SET ${GIVE_UP} WHERE id = $1 AND status = 'running' AND ${STALE('$2')} RETURNING id`, [
      runId,
      staleAfterMs,
    ]);
    return rows.length > 0;
  }

  /**
   * Records that the run is alive while it is running with a fresh
   * heartbeat; answers its status, `stale` when it is running but its
   * heartbeat is stale (not refreshed), null when it no longer exists.
   */
  async heartbeat(runId: string, staleAfterMs: number): Promise<RunStatus | 'stale' | null> {
    const [row] = await sqlRows<{ status: RunStatus; stale: boolean }>(
      this.dataSource,
      `WITH beat AS (
         UPDATE chat_runs SET heartbeat_at = now()
          WHERE id = $1 AND status = 'running' AND NOT (${STALE('$2')})
         RETURNING status
       )
       SELECT status, false AS stale FROM beat
       UNION ALL
       SELECT status, status = 'running' AS stale FROM chat_runs WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM beat)`,
      [runId, staleAfterMs],
    );
    if (!row) return null;
    return row.stale ? 'stale' : row.status;
  }

  /** A heartbeat whatever the last one's age, only while the run is `running`. */
  async revive(runId: string): Promise<void> {
    await this.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
  }

  /** The message that started the run. */
  async message(runId: string): Promise<string | null> {
    const [row] = await sqlRows<{ message: string | null }>(this.dataSource, `SELECT message FROM chat_runs WHERE id = $1`, [runId]);
    return row?.message ?? null;
  }

  /** The run's session, or null when the run no longer exists. */
  async sessionOf(runId: string): Promise<string | null> {
    const [row] = await sqlRows<{ session_id: string }>(this.dataSource, `SELECT session_id FROM chat_runs WHERE id = $1`, [runId]);
    return row?.session_id ?? null;
  }

  /** Ends the run while it is still running; answers its session when it did, null when the run was not running. */
  async finish(manager: EntityManager, runId: string, status: Exclude<RunStatus, 'running'>, error: string | null): Promise<string | null> {
    const [row] = await sqlRows<{ session_id: string }>(
      manager,
      `UPDATE chat_runs SET status = $2, error = $3, finished_at = now() WHERE id = $1 AND status = 'running' RETURNING session_id`,
      [runId, status, error],
    );
    return row?.session_id ?? null;
  }

  /** The run's status as stored (null when it no longer exists), and whether a running run's heartbeat is stale. */
  async statusOf(db: DataSource | EntityManager, runId: string, staleAfterMs: number): Promise<{ status: RunStatus; stale: boolean } | null> {
    const [row] = await sqlRows<{ status: RunStatus; stale: boolean }>(db, `SELECT status, status = 'running' AND ${STALE('$2')} AS stale FROM chat_runs WHERE id = $1`, [
      runId,
      staleAfterMs,
    ]);
    return row ?? null;
  }

  /** The run when it belongs to the user; null otherwise. */
  async find(runId: string, userId: string): Promise<RunRecord | null> {
    const [row] = await sqlRows<RunRecord>(this.dataSource, `SELECT id, session_id, user_id, status FROM chat_runs WHERE id = $1 AND user_id = $2`, [runId, userId]);
    return row ?? null;
  }

  /** The run's times and status as stored, when it belongs to the user. */
  async info(runId: string, userId: string): Promise<RunRow | null> {
    const [row] = await sqlRows<RunRow>(
      this.dataSource,
      `SELECT id AS run_id, session_id, status, created_at AS started_at, finished_at, message FROM chat_runs WHERE id = $1 AND user_id = $2`,
      [runId, userId],
    );
    return row ?? null;
  }

  /** The session's runs of the user, newest first, optionally of one status. */
  async listForSession(sessionId: string, userId: string, limit: number, offset: number, status: RunStatus | null): Promise<RunRow[]> {
    return await sqlRows<RunRow>(
      this.dataSource,
      `SELECT id AS run_id, session_id, status, created_at AS started_at, finished_at, message FROM chat_runs
        WHERE session_id = $1 AND user_id = $2 AND ($5::varchar IS NULL OR status = $5)
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [sessionId, userId, limit, offset, status],
    );
  }

  /** The running run of a session, if any. */
  async runningIn(sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ id: string }>(this.dataSource, `SELECT id FROM chat_runs WHERE session_id = $1 AND status = 'running'`, [sessionId]);
    return row?.id ?? null;
  }
}
