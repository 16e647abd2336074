import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isForeignKeyViolation, sqlRows } from '../../database/sql.js';

export interface PendingRunRow {
  run_id: string;
  session_id: string;
  created_at: Date;
  /** Its instance stopped beating its heartbeat: it died, and the run will never start. */
  lost: boolean;
}

const LOST = (staleAfterMs: string) => `heartbeat_at < clock_timestamp() - ${staleAfterMs}::int * INTERVAL '1 millisecond'`;

/** The `langgraph_pending_runs` table: runs queued behind a thread's running run (multitask strategy `enqueue`). */
@Injectable()
export class PendingRunRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Queues the run on the session (the caller checked it is the user's); false when the session was deleted meanwhile. */
  async insert(runId: string, sessionId: string, userId: string): Promise<boolean> {
    try {
      await this.dataSource.query('INSERT INTO langgraph_pending_runs (run_id, session_id, user_id) VALUES ($1, $2, $3)', [runId, sessionId, userId]);
      return true;
    } catch (error) {
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  }

  /** Beats the run's heartbeat; false when it is no longer queued (cancelled, or its session deleted). */
  async beat(runId: string): Promise<boolean> {
    const rows = await sqlRows<{ run_id: string }>(this.dataSource, 'UPDATE langgraph_pending_runs SET heartbeat_at = clock_timestamp() WHERE run_id = $1 RETURNING run_id', [
      runId,
    ]);
    return rows.length > 0;
  }

  /** Whether the run is the first live one queued on its session (runs whose instance died do not hold the queue). */
  async isFirst(runId: string, sessionId: string, staleAfterMs: number): Promise<boolean> {
    const [row] = await sqlRows<{ run_id: string }>(
      this.dataSource,
      `SELECT run_id FROM langgraph_pending_runs WHERE session_id = $1 AND NOT ${LOST('$2')} ORDER BY created_at, run_id LIMIT 1`,
      [sessionId, staleAfterMs],
    );
    return row?.run_id === runId;
  }

  /** Removes the run from the queue (it started, or was cancelled); true when it was queued. */
  async remove(runId: string, userId?: string): Promise<boolean> {
    const rows = await sqlRows<{ run_id: string }>(
      this.dataSource,
      'DELETE FROM langgraph_pending_runs WHERE run_id = $1 AND ($2::varchar IS NULL OR user_id = $2) RETURNING run_id',
      [runId, userId ?? null],
    );
    return rows.length > 0;
  }

  /** The user's queued run, or null. */
  async find(runId: string, userId: string, staleAfterMs: number): Promise<PendingRunRow | null> {
    const [row] = await sqlRows<PendingRunRow>(
      this.dataSource,
      `SELECT run_id::text, session_id::text, created_at, ${LOST('$3')} AS lost FROM langgraph_pending_runs WHERE run_id = $1 AND user_id = $2`,
      [runId, userId, staleAfterMs],
    );
    return row ?? null;
  }

  /** The user's queued runs on a session, oldest first. */
  async listForSession(sessionId: string, userId: string, staleAfterMs: number): Promise<PendingRunRow[]> {
    return sqlRows<PendingRunRow>(
      this.dataSource,
      `SELECT run_id::text, session_id::text, created_at, ${LOST('$3')} AS lost FROM langgraph_pending_runs
        WHERE session_id = $1 AND user_id = $2 ORDER BY created_at, run_id`,
      [sessionId, userId, staleAfterMs],
    );
  }
}
