import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isUniqueViolation, sqlRows } from '../database/sql.js';
import { RunNotRunningError } from './chat.errors.js';

/** The session already has a run in flight (internal: the caller decides between 409 and taking over a stale run). */
export class RunSlotTakenError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has a run in flight`);
  }
}

export const RUN_STATUSES = ['running', 'done', 'error', 'interrupted', 'abandoned', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunRecord {
  id: string;
  session_id: string;
  user_id: string;
  status: RunStatus;
}

/** What a client learns of a run (GET /api/chat/runs/:run_id). */
export interface RunInfoRecord {
  run_id: string;
  session_id: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
}

/**
 * The runs table: one run in flight per session across every instance
 * (a partial unique index), with a heartbeat every RUN_HEARTBEAT_MS so a run
 * whose instance died is seen as abandoned once RUN_STALE_AFTER_MS passed
 * without one — by the next turn of its session and by its followers alike.
 */
@Injectable()
export class RunRegistry {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get heartbeatMs(): number {
    return this.config.chat.runHeartbeatMs;
  }

  get staleAfterMs(): number {
    return this.config.chat.runStaleAfterMs;
  }

  /**
   * Claims the session's run slot inside the transaction that opened the
   * session. Throws RunSlotTakenError when a run is in flight there.
   */
  async claim(manager: EntityManager, runId: string, sessionId: string, userId: string, message: string): Promise<void> {
    try {
      await manager.query(`INSERT INTO chat_runs (id, session_id, user_id, status, message) VALUES ($1, $2, $3, 'running', $4)`, [
        runId,
        sessionId,
        userId,
        message,
      ]);
    } catch (error) {
      // The transaction is spoiled and rolls back whole: a session it had just created goes with it.
      if (isUniqueViolation(error)) throw new RunSlotTakenError(sessionId);
      throw error;
    }
  }

  /** Marks the session's running run abandoned when its heartbeat is stale (its checkpoints go with it); true when one was. */
  async releaseStale(sessionId: string): Promise<boolean> {
    const released = await sqlRows(
      this.dataSource,
      `UPDATE chat_runs SET status = 'abandoned', finished_at = now(), error = 'no heartbeat'
        WHERE session_id = $1 AND status = 'running'
          AND heartbeat_at < now() - $2::int * INTERVAL '1 millisecond'
      RETURNING id`,
      [sessionId, this.config.chat.runStaleAfterMs],
    );
    return released.length > 0;
  }

  /**
   * Marks every running run whose heartbeat is stale abandoned, whatever its
   * session: a run whose instance died is given up even when nobody comes
   * back to its session (its checkpoints go with it, see the migration
   * AbandonedRunsForgetCheckpoints). Answers the ids given up.
   */
  async releaseAllStale(): Promise<string[]> {
    const released = await sqlRows<{ id: string }>(
      this.dataSource,
      `UPDATE chat_runs SET status = 'abandoned', finished_at = now(), error = 'no heartbeat'
        WHERE status = 'running' AND heartbeat_at < now() - $1::int * INTERVAL '1 millisecond'
      RETURNING id`,
      [this.config.chat.runStaleAfterMs],
    );
    return released.map((row) => row.id);
  }

  /**
   * Records that the run is alive; answers its status (`running`, or how it
   * was ended meanwhile; null when its session was deleted). A heartbeat
   * does not by itself bring back a run whose heartbeat is already stale: it
   * answers `stale` instead, since one sent during a database stall and run by
   * the server only after it may belong to a run that failed meanwhile. The
   * instance, which knows whether the run still works, then calls `revive`.
   */
  async heartbeat(runId: string): Promise<RunStatus | 'stale' | null> {
    const [row] = await sqlRows<{ status: RunStatus; stale: boolean }>(
      this.dataSource,
      `WITH beat AS (
         UPDATE chat_runs SET heartbeat_at = now()
          WHERE id = $1 AND status = 'running' AND heartbeat_at >= now() - $2::int * INTERVAL '1 millisecond'
         RETURNING status
       )
       SELECT status, false AS stale FROM beat
       UNION ALL
       SELECT status, status = 'running' AS stale FROM chat_runs WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM beat)`,
      [runId, this.config.chat.runStaleAfterMs],
    );
    if (!row) return null;
    return row.stale ? 'stale' : row.status;
  }

  /** A heartbeat for a run whose last one is stale, sent by its instance while the run still works; only while it is `running`. */
  async revive(runId: string): Promise<void> {
    await this.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
  }

  /** The message that started the run (kept for a cancel that must store it itself). */
  async message(runId: string): Promise<string | null> {
    const [row] = await sqlRows<{ message: string | null }>(this.dataSource, `SELECT message FROM chat_runs WHERE id = $1`, [runId]);
    return row?.message ?? null;
  }

  /**
   * Records the run's end, only while it is still running: a run already
   * given up as abandoned keeps that status. Inside a turn's transaction
   * (`manager`), a run that is no longer running throws RunNotRunningError,
   * which rolls the turn back: its session may already serve another run.
   */
  async finish(runId: string, status: Exclude<RunStatus, 'running'>, error?: string, manager?: EntityManager): Promise<void> {
    const rows = await sqlRows<{ id: string }>(
      manager ?? this.dataSource,
      `UPDATE chat_runs SET status = $2, error = $3, finished_at = now() WHERE id = $1 AND status = 'running' RETURNING id`,
      [runId, status, error ?? null],
    );
    if (rows.length === 0 && manager) {
      const [row] = await sqlRows<{ status: RunStatus }>(manager, 'SELECT status FROM chat_runs WHERE id = $1', [runId]);
      throw new RunNotRunningError(runId, row?.status ?? null);
    }
  }

  /** The run when it belongs to the user; null otherwise (another user's run looks missing). */
  async find(runId: string, userId: string): Promise<RunRecord | null> {
    const [row] = await sqlRows<RunRecord>(
      this.dataSource,
      `SELECT id, session_id, user_id, status FROM chat_runs WHERE id = $1 AND user_id = $2`,
      [runId, userId],
    );
    return row ?? null;
  }

  /** The run as its owner may see it; null for another user's run and for a missing one alike. */
  async info(runId: string, userId: string): Promise<RunInfoRecord | null> {
    const [row] = await sqlRows<{ run_id: string; session_id: string; status: RunStatus; started_at: Date; finished_at: Date | null }>(
      this.dataSource,
      `SELECT id AS run_id, session_id, status, created_at AS started_at, finished_at FROM chat_runs WHERE id = $1 AND user_id = $2`,
      [runId, userId],
    );
    if (!row) return null;
    return {
      run_id: row.run_id,
      session_id: row.session_id,
      // A `running` run whose heartbeat stopped is answered as abandoned, as its followers see it.
      status: row.status === 'running' ? ((await this.status(runId)) ?? row.status) : row.status,
      started_at: new Date(row.started_at).toISOString(),
      finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    };
  }

  /** The running run of a session, if any. */
  async runningIn(sessionId: string): Promise<string | null> {
    const [row] = await sqlRows<{ id: string }>(this.dataSource, `SELECT id FROM chat_runs WHERE session_id = $1 AND status = 'running'`, [sessionId]);
    return row?.id ?? null;
  }

  /**
   * The run's status as its followers must see it: a `running` run whose
   * heartbeat stopped is marked `abandoned` here (its instance died) and
   * answered as such. Null when the run no longer exists (its session was deleted).
   */
  async status(runId: string): Promise<RunStatus | null> {
    const [row] = await sqlRows<{ status: RunStatus; lost: boolean }>(
      this.dataSource,
      `WITH lost AS (
         UPDATE chat_runs SET status = 'abandoned', finished_at = now(), error = 'no heartbeat'
          WHERE id = $1 AND status = 'running' AND heartbeat_at < now() - $2::int * INTERVAL '1 millisecond'
         RETURNING id
       )
       SELECT status, EXISTS (SELECT 1 FROM lost) AS lost FROM chat_runs WHERE id = $1`,
      [runId, this.config.chat.runStaleAfterMs],
    );
    if (!row) return null;
    return row.lost ? 'abandoned' : row.status;
  }
}
