import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isUniqueViolation } from '../database/sql.js';
import { SessionWrites } from '../session/session-writes.service.js';
import { RunNotRunningError } from './chat.errors.js';
import { EndedRun, RunRecord, RunRepository, RunRow, RunStatus } from './run.repository.js';

export { RUN_STATUSES } from './run.repository.js';
export type { RunRecord, RunStatus } from './run.repository.js';

/** The session already has a run in flight (internal: the caller decides between 409 and taking over a stale run). */
export class RunSlotTakenError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has a run in flight`);
  }
}

/** What a client learns of a run (GET /api/chat/runs/:run_id). */
export interface RunInfoRecord {
  run_id: string;
  session_id: string;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  message: string | null;
}

/**
 * The runs: one run in flight per session across every instance, with a
 * heartbeat every RUN_HEARTBEAT_MS so a run whose instance died is seen as
 * abandoned once RUN_STALE_AFTER_MS passed without one — by the next turn of
 * its session, by its followers and by the reaper alike.
 *
 * A run's start and end also name and clear the session's run in flight
 * (the session's `active_run`) in the same transaction, which moves the
 * session-list version: a cached list shows a run that started or ended at
 * the next read, on every instance. A transaction that ends runs outside a
 * turn's commit locks their sessions first, as a turn's commit and a
 * session's delete do.
 */
@Injectable()
export class RunRegistry {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunRepository,
    private readonly sessions: SessionWrites,
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
    // The session's row first (a run's end takes it first too), then the run's.
    await this.sessions.runStarted(manager, sessionId, runId);
    try {
      await this.runs.insertRunning(manager, runId, sessionId, userId, message);
    } catch (error) {
      // The transaction is spoiled and rolls back whole: a session it had just created goes with it.
      if (isUniqueViolation(error)) throw new RunSlotTakenError(sessionId);
      throw error;
    }
  }

  /** Marks the session's running run abandoned when its heartbeat is stale (its checkpoints go with it); true when one was. */
  async releaseStale(sessionId: string): Promise<boolean> {
    if ((await this.runs.sessionsWithStaleRuns(this.staleAfterMs, sessionId)).length === 0) return false;
    return (await this.giveUpStale([sessionId])).length > 0;
  }

  /**
   * Marks every running run whose heartbeat is stale abandoned, whatever its
   * session: a run whose instance died is given up even when nobody comes
   * back to its session (its checkpoints go with it, see the migration
   * AbandonedRunsForgetCheckpoints). Answers the ids given up.
   */
  async releaseAllStale(): Promise<string[]> {
    const sessionIds = await this.runs.sessionsWithStaleRuns(this.staleAfterMs);
    if (sessionIds.length === 0) return [];
    return (await this.giveUpStale(sessionIds)).map((run) => run.runId);
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
    return this.runs.heartbeat(runId, this.staleAfterMs);
  }

  /** A heartbeat for a run whose last one is stale, sent by its instance while the run still works; only while it is `running`. */
  async revive(runId: string): Promise<void> {
    await this.runs.revive(runId);
  }

  /** The message that started the run (kept for a cancel that must store it itself). */
  async message(runId: string): Promise<string | null> {
    return this.runs.message(runId);
  }

  /**
   * Records the run's end, only while it is still running: a run already
   * given up as abandoned keeps that status. Inside a turn's transaction
   * (`manager`, which holds the session's row), a run that is no longer
   * running throws RunNotRunningError, which rolls the turn back: its session
   * may already serve another run.
   */
  async finish(runId: string, status: Exclude<RunStatus, 'running'>, error?: string, manager?: EntityManager): Promise<void> {
    if (!manager) {
      const sessionId = await this.runs.sessionOf(runId);
      if (sessionId === null) return;
      await this.dataSource.transaction(async (own) => {
        await this.sessions.lockForRunEnd(own, [sessionId]);
        if ((await this.runs.finish(own, runId, status, error ?? null)) !== null) await this.sessions.runsEnded(own, [{ sessionId, runId }]);
      });
      return;
    }
    const sessionId = await this.runs.finish(manager, runId, status, error ?? null);
    if (sessionId === null) {
      const row = await this.runs.statusOf(manager, runId, this.staleAfterMs);
      throw new RunNotRunningError(runId, row?.status ?? null);
    }
    await this.sessions.runsEnded(manager, [{ sessionId, runId }]);
  }

  /** The run when it belongs to the user; null otherwise (another user's run looks missing). */
  async find(runId: string, userId: string): Promise<RunRecord | null> {
    return this.runs.find(runId, userId);
  }

  /** The run as its owner may see it; null for another user's run and for a missing one alike. */
  async info(runId: string, userId: string): Promise<RunInfoRecord | null> {
    const row = await this.runs.info(runId, userId);
    return row ? this.toInfo(row) : null;
  }

  private async toInfo(row: RunRow): Promise<RunInfoRecord> {
    return {
      run_id: row.run_id,
      session_id: row.session_id,
      // A `running` run whose heartbeat stopped is answered as abandoned, as its followers see it.
      status: row.status === 'running' ? ((await this.status(row.run_id)) ?? row.status) : row.status,
      started_at: new Date(row.started_at).toISOString(),
      finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
      message: row.message ?? null,
    };
  }

  /** The user's runs in a session, newest first (optionally of one status), as `info` answers them. */
  async listInSession(sessionId: string, userId: string, page: { limit: number; offset: number; status: RunStatus | null }): Promise<RunInfoRecord[]> {
    const rows = await this.runs.listForSession(sessionId, userId, page.limit, page.offset, page.status);
    return Promise.all(rows.map((row) => this.toInfo(row)));
  }

  /** The running run of a session, if any. */
  async runningIn(sessionId: string): Promise<string | null> {
    return this.runs.runningIn(sessionId);
  }

  /**
   * The run's status as its followers must see it: a `running` run whose
   * heartbeat stopped is marked `abandoned` here (its instance died) and
   * answered as such. Null when the run no longer exists (its session was deleted).
   */
  async status(runId: string): Promise<RunStatus | null> {
    const row = await this.runs.statusOf(this.dataSource, runId, this.staleAfterMs);
    if (!row?.stale) return row?.status ?? null;
    const sessionId = await this.runs.sessionOf(runId);
    if (sessionId === null) return null;
    const lost = await this.dataSource.transaction(async (manager) => {
      await this.sessions.lockForRunEnd(manager, [sessionId]);
      const given = await this.runs.giveUpIfStale(manager, runId, this.staleAfterMs);
      if (given) await this.sessions.runsEnded(manager, [{ sessionId, runId }]);
      return given;
    });
    return lost ? 'abandoned' : ((await this.runs.statusOf(this.dataSource, runId, this.staleAfterMs))?.status ?? null);
  }

  /** Gives up the stale running runs of these sessions, their sessions locked first, and clears them from the sessions. */
  private async giveUpStale(sessionIds: string[]): Promise<EndedRun[]> {
    return this.dataSource.transaction(async (manager) => {
      await this.sessions.lockForRunEnd(manager, sessionIds);
      const released = await this.runs.giveUpStaleIn(manager, sessionIds, this.staleAfterMs);
      await this.sessions.runsEnded(manager, released);
      return released;
    });
  }
}
