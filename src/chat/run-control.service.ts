import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { RunNotRunningError } from './chat.errors.js';
import { RunCancellation } from './run-cancellation.service.js';
import { RunInfoRecord, RunRegistry } from './run-registry.service.js';
import { TurnCommits } from './turn-commits.service.js';

/** How often a cancel looks whether the run stopped. */
const CANCEL_POLL_MS = 25;

/** A run started on this instance, watched while its turn works. */
export interface WatchedRun {
  /** Aborted when the run is cancelled, given up, its session deleted, or the instance shuts down; the reason says which. */
  signal: AbortSignal;
  /** The turn is settling its outcome: a late heartbeat answer may no longer revive the run. */
  settling(): void;
  /** The turn ended: no more heartbeats, no more cancel requests reach it. */
  stop(): void;
}

/**
 * Run control: a run started here is watched (its cancel signal, its
 * heartbeat), and a user's cancel stops a run on whichever instance runs it,
 * or ends it itself when that instance does not answer.
 */
@Injectable()
export class RunControl {
  constructor(
    private readonly runs: RunRegistry,
    private readonly cancellation: RunCancellation,
    private readonly commits: TurnCommits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Registers the run's cancel signal and beats its heartbeat. A run no longer `running` in the database (cancelled
   * while Redis could not carry the request, given up, or its session deleted) is aborted too.
   */
  watch(runId: string, sessionId: string): WatchedRun {
    const signal = this.cancellation.register(runId);
    let working = true;
    const heartbeat = setInterval(
      () =>
        void this.runs
          .heartbeat(runId)
          .then((status) => {
            // Its heartbeats were late past RUN_STALE_AFTER_MS (a database stall, a long pause) and nobody gave it up
            // meanwhile: the run still works, so it says so. A heartbeat of a run that has failed since never does this.
            if (status === 'stale') return working ? this.runs.revive(runId) : undefined;
            // Cancelled through the database; or its session was deleted, or it was given up: the work stops either way.
            if (status === 'cancelled') this.cancellation.abortLocal(runId);
            else if (status === null) this.cancellation.abortLocal(runId, new SessionNotFoundError(sessionId));
            else if (status !== 'running') this.cancellation.abortLocal(runId, new RunNotRunningError(runId, status));
          })
          .catch(() => undefined),
      this.runs.heartbeatMs,
    );
    heartbeat.unref();
    return {
      signal,
      settling: () => (working = false),
      stop: () => {
        clearInterval(heartbeat);
        this.cancellation.release(runId);
      },
    };
  }

  /**
   * Cancels the user's run (POST /api/chat/runs/:run_id/cancel): asks the
   * instance running it to stop, waits up to RUN_CANCEL_WAIT_MS for it to,
   * and ends it itself when it did not. Answers the run as it then stands;
   * null when it is not the user's.
   */
  async cancel(runId: string, userId: string): Promise<RunInfoRecord | null> {
    const run = await this.runs.info(runId, userId);
    if (!run || run.status !== 'running') return run;
    await this.cancellation.request(runId);
    const deadline = Date.now() + this.config.chat.runCancelWaitMs;
    while (Date.now() < deadline && (await this.runs.status(runId)) === 'running') {
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
    }
    // The running instance did not stop it in time (it may be cut off from Redis): the cancel records it and keeps its
    // message itself, and that instance stops at its next heartbeat without committing.
    if ((await this.runs.status(runId)) === 'running') await this.forceCancel(runId, userId, run.session_id);
    return (await this.runs.info(runId, userId)) ?? run;
  }

  /**
   * Ends a run the cancel could not stop through its instance (Redis could
   * not carry the request, or that instance did not answer in time): the run
   * is recorded cancelled and the message that started it kept, marked
   * cancelled, in one transaction. False when the run had ended meanwhile.
   */
  private async forceCancel(runId: string, userId: string, sessionId: string): Promise<boolean> {
    const message = await this.runs.message(runId);
    try {
      await this.commits.commit({ runId, userId, sessionId }, message ? [{ type: 'human', content: message, run_id: runId, status: 'cancelled' }] : [], {
        status: 'cancelled',
        error: 'cancelled by the user',
      });
      return true;
    } catch (error) {
      if (error instanceof RunNotRunningError || error instanceof SessionNotFoundError) return false;
      throw error;
    }
  }
}
