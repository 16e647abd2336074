import { Logger } from '@nestjs/common';
import pRetry from 'p-retry';
import type { RunRegistry, RunStatus } from './run-registry.service.js';

export interface PendingEnd {
  runId: string;
  status: Exclude<RunStatus, 'running'>;
  error?: string;
}

/**
 * The ends of runs this instance could not record because the database did
 * not answer (a turn that failed during a stall, a claim whose COMMIT got no
 * answer). Until it is recorded the run holds its session, so:
 *
 * - it is retried in the background, once per heartbeat interval, until it
 *   lands or the run counts as stale anyway (RUN_STALE_AFTER_MS: any
 *   instance then takes the session over; a heartbeat that reached the
 *   server late cannot make it fresh again, see RunRegistry.heartbeat);
 * - the next turn of the same session on this instance records it at once
 *   (`settle`), so a retry sent here right after the stall is not refused.
 *
 * A retry that reaches another instance before either is refused with 409
 * `run_in_progress` for at most one heartbeat interval after the database
 * answers again.
 */
export class PendingRunEnds {
  private readonly logger = new Logger(PendingRunEnds.name);
  /** By session id: a session has one run in flight at a time. */
  private readonly pending = new Map<string, PendingEnd>();

  constructor(
    private readonly runs: RunRegistry,
    private readonly staleAfterMs: number,
  ) {}

  /** Records the run's end in the background (it ends only a run still `running`). */
  record(sessionId: string, end: PendingEnd): void {
    this.pending.set(sessionId, end);
    void pRetry(() => this.runs.finish(end.runId, end.status, end.error), {
      retries: Number.MAX_SAFE_INTEGER,
      minTimeout: this.runs.heartbeatMs,
      factor: 1,
      maxRetryTime: this.staleAfterMs,
      unref: true,
      onFailedAttempt: ({ error }) => this.logger.warn(`run ${end.runId} not yet marked ${end.status}: ${error.message}; retrying`),
    })
      .catch(() => undefined)
      .finally(() => {
        if (this.pending.get(sessionId) === end) this.pending.delete(sessionId);
      });
  }

  /** Records the pending end of the session's run now; true when there was one (the session may be free now). */
  async settle(sessionId: string): Promise<boolean> {
    const end = this.pending.get(sessionId);
    if (!end) return false;
    await this.runs.finish(end.runId, end.status, end.error);
    if (this.pending.get(sessionId) === end) this.pending.delete(sessionId);
    return true;
  }
}
