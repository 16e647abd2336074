import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { transactionKnowingCommit } from '../database/commit-outcome.js';
import type { NewMessage } from '../session/message.repository.js';
import { AppendTurnOptions, AppendTurnResult, SessionWrites } from '../session/session-writes.service.js';
import { RunRegistry, RunStatus } from './run-registry.service.js';

/** The run a commit ends, in its session, of its user. */
export interface TurnRef {
  runId: string;
  sessionId: string;
  userId: string;
}

/** A turn's commits, shared by the turn (ChatService) and a cancel that ends a run itself (RunControl). */
@Injectable()
export class TurnCommits {
  constructor(
    private readonly sessionWrites: SessionWrites,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunRegistry,
  ) {}

  /**
   * Commits a turn's messages (in its session, which must still exist) and its run's end in one transaction: the
   * run's end commits with the turn, so a client posting right after `done` finds the session free, and a run given
   * up as abandoned or cancelled meanwhile cannot commit at all (RunNotRunningError). A COMMIT without an answer
   * throws CommitOutcomeUnknownError: the caller finds out what landed.
   */
  async commit(
    turn: TurnRef,
    messages: NewMessage[],
    end: { status: Exclude<RunStatus, 'running'>; error?: string },
    options: Omit<AppendTurnOptions, 'createIfMissing'> = {},
  ): Promise<AppendTurnResult> {
    const { runId, sessionId, userId } = turn;
    const stored = await transactionKnowingCommit(this.dataSource, async (manager) => {
      const appended = await this.sessionWrites.appendTurn(manager, userId, sessionId, messages, { ...options, createIfMissing: false });
      await this.runs.finish(runId, end.status, end.error, manager);
      return appended;
    });
    await this.sessionWrites.turnCommitted(userId, sessionId);
    return stored;
  }
}
