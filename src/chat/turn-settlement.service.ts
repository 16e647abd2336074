import { Inject, Injectable, Logger } from '@nestjs/common';
import { withTimeout } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SessionNotFoundError } from '../session/session.errors.js';
import { RunNotRunningError, TurnFailedError } from './chat.errors.js';
import { RunSlots } from './run-slots.service.js';
import { TurnCommits } from './turn-commits.service.js';
import { afterKeepFailed, decideFailure, FailureVerdict, toldAfterCancel } from './turn-failure.js';
import type { GraphOutcome, PreparedTurn } from './turn-outcome.js';

/**
 * What a session's turn that did not answer leaves stored, found out before
 * its client is told: a failed turn's message, kept marked `failed` when it
 * can be, and a cancelled turn's message and answer so far, kept marked
 * `cancelled`, each with the run's end in the same transaction. When the
 * run cannot be ended now, its end is recorded later (RunSlots.endLater).
 * The decisions are turn-failure.ts's.
 */
@Injectable()
export class TurnSettlement {
  private readonly logger = new Logger(TurnSettlement.name);

  constructor(
    private readonly commits: TurnCommits,
    private readonly slots: RunSlots,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A failed turn: `landed` when the turn's own commit landed after all;
   * else the code to report and whether the user's message is kept (null:
   * not known yet).
   */
  async failed(turn: PreparedTurn, cause: unknown, error: unknown, commitSent: boolean): Promise<'landed' | FailureVerdict> {
    const { runId, sessionId, message } = turn;
    let decision = decideFailure(cause, error, commitSent);
    if (decision.kind === 'keep') {
      // After a COMMIT without an answer, keeping the message also reads back what landed: the turn's transaction holds
      // its rows until it ends, and a run it ended reads `done`. That read-back waits at most the lock limit.
      const keep = decision;
      const keeping = this.commits.commit(turn, [{ type: 'human', content: message, run_id: runId, status: 'failed' }], keep.end);
      try {
        await (keep.readBack ? withTimeout(keeping, this.config.database.lockTimeoutMs, () => new Error('the read-back of the turn did not finish in time')) : keeping);
        return { code: keep.code, reason: keep.reason, saved: true };
      } catch (saveError) {
        decision = afterKeepFailed(keep, saveError, commitSent);
        if (decision.kind === 'told' && decision.endLater) this.logger.error({ err: saveError, run_id: runId }, 'could not keep the human message');
      }
    }
    if (decision.kind === 'landed') return 'landed';
    if (decision.kind !== 'told') throw new Error('unreachable: a failure decided twice to keep the message');
    if (decision.endLater) this.slots.endLater(sessionId, { runId, ...decision.endLater });
    return { code: decision.code, reason: decision.reason, saved: decision.saved };
  }

  /**
   * A cancelled turn: the human message and whatever the model had said are
   * kept, so the session is free the moment the cancel returns. Answers the
   * error the turn ends with.
   */
  async cancelled(turn: PreparedTurn, answerSoFar: string, trace: GraphOutcome['trace']): Promise<TurnFailedError> {
    let partial = answerSoFar;
    const { runId, sessionId, message } = turn;
    let saved: boolean | null = true;
    try {
      await this.commits.commit(
        turn,
        [
          { type: 'human', content: message, run_id: runId, status: 'cancelled' },
          ...(partial ? [{ type: 'ai' as const, content: partial, rag_trace: trace, run_id: runId, status: 'cancelled' as const }] : []),
        ],
        { status: 'cancelled', error: 'cancelled by the user' },
      );
    } catch (error) {
      if (error instanceof RunNotRunningError && error.status === 'cancelled') {
        // The cancel could not reach this instance in time and ended the run itself, keeping the message (not the answer so far).
        partial = '';
      } else {
        this.logger.warn({ err: error, run_id: runId }, 'a cancelled turn could not be kept');
        saved = error instanceof SessionNotFoundError || error instanceof RunNotRunningError ? false : null;
        if (saved === null) this.slots.endLater(sessionId, { runId, status: 'cancelled', error: 'cancelled by the user' });
      }
    }
    return new TurnFailedError('cancelled', `The turn was cancelled. ${toldAfterCancel(saved, partial !== '')}`, saved);
  }
}
