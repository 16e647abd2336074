import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isForeignKeyViolation, isUniqueViolation, sqlRows } from '../database/sql.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { RunInProgressError, RunNotRunningError } from './chat.errors.js';

export type RunStatus = 'running' | 'done' | 'error' | 'interrupted' | 'abandoned';

export interface RunRecord {
  id: string;
  session_id: string;
  user_id: string;
  status: RunStatus;
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

  /** Claims the session's run slot; the session row must exist (see ConversationStorage.openSession). */
  async start(runId: string, sessionId: string, userId: string): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await this.dataSource.query(
          `INSERT INTO chat_runs (id, session_id, user_id, status) VALUES ($1, $2, $3, 'running')`,
          [runId, sessionId, userId],
        );
        return;
      } catch (error) {
        // The session was deleted between opening it and claiming its slot.
        if (isForeignKeyViolation(error)) throw new SessionNotFoundError(sessionId);
        if (!isUniqueViolation(error)) throw error;
        const released = await sqlRows(
          this.dataSource,
          `UPDATE chat_runs SET status = 'abandoned', finished_at = now(), error = 'no heartbeat'
            WHERE session_id = $1 AND status = 'running'
              AND heartbeat_at < now() - $2::int * INTERVAL '1 millisecond'
          RETURNING id`,
          [sessionId, this.config.chat.runStaleAfterMs],
        );
        if (released.length === 0) throw new RunInProgressError(sessionId);
      }
    }
    throw new RunInProgressError(sessionId);
  }

  async heartbeat(runId: string): Promise<void> {
    await this.dataSource.query(`UPDATE chat_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
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
