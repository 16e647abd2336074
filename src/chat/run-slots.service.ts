import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { CommitOutcomeUnknownError, transactionKnowingCommit } from '../database/commit-outcome.js';
import { titleFrom } from '../session/session-title.js';
import { SessionWrites } from '../session/session-writes.service.js';
import { RunInProgressError } from './chat.errors.js';
import { PendingEnd, PendingRunEnds } from './pending-run-ends.js';
import { RunRegistry, RunSlotTakenError } from './run-registry.service.js';
import type { PreparedTurn } from './turn-outcome.js';

/**
 * Each session's run slot: one run at a time. A turn opens its session and
 * claims the slot together; a run whose end this instance could not record
 * (PendingRunEnds) or whose instance died (its heartbeat is stale) stops
 * blocking it.
 */
@Injectable()
export class RunSlots {
  private readonly pendingEnds: PendingRunEnds;

  constructor(
    private readonly sessionWrites: SessionWrites,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunRegistry,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.pendingEnds = new PendingRunEnds(runs, config.chat.runStaleAfterMs);
  }

  /**
   * Opens the session (creating it for a first turn, so it exists for its
   * owner only from now on) and claims its run slot; throws
   * SessionNotFoundError (another user's or deleted session) or RunInProgressError.
   * `runId` names the run when the caller announced it already.
   */
  async claim(userId: string, message: string, sessionId?: string, runId: string = randomUUID()): Promise<PreparedTurn> {
    const id = sessionId ?? randomUUID();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        // The session and its run slot commit together: a session a first turn creates exists with its run.
        await transactionKnowingCommit(this.dataSource, async (manager) => {
          await this.sessionWrites.open(manager, userId, id, titleFrom(message));
          await this.runs.claim(manager, runId, id, userId, message);
        });
        return { runId, sessionId: id, userId, message };
      } catch (error) {
        // The claim may have landed with nobody to run it: it is ended, so that it does not hold the session.
        if (error instanceof CommitOutcomeUnknownError) this.endLater(id, { runId, status: 'error', error: 'its claim was not confirmed' });
        if (!(error instanceof RunSlotTakenError)) throw error;
        // A run of this instance that failed without its end recorded, or a run whose instance died (its heartbeat is
        // stale), stops blocking its session.
        if ((await this.pendingEnds.settle(id)) || (await this.runs.releaseStale(id))) continue;
        // Nothing was released here, but the run may have ended meanwhile (given up by another instance's reaper, say):
        // the slot is tried again then.
        const running = await this.runs.runningIn(id).catch(() => undefined);
        if (running !== null) throw new RunInProgressError(id, running ?? null);
      }
    }
    throw new RunInProgressError(id, await this.runs.runningIn(id).catch(() => null));
  }

  /** Records the end of the session's run in the background, when the database did not take it now; the session's next claim here records it first. */
  endLater(sessionId: string, end: PendingEnd): void {
    this.pendingEnds.record(sessionId, end);
  }
}
