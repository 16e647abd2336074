import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { transactionKnowingCommit } from '../../src/database/commit-outcome.js';
import type { NewMessage } from '../../src/session/message.repository.js';
import { SessionReads } from '../../src/session/session-reads.service.js';
import { AppendTurnOptions, AppendTurnResult, SessionWrites } from '../../src/session/session-writes.service.js';

/** Stores turns and reads sessions as the app does, without running a turn: a transaction per call, as ChatService opens one. */
export interface SessionStorage {
  /** Appends messages to the user's session (created unless `createIfMissing` is false) and drops the stale cached copies. */
  appendTurn(userId: string, sessionId: string, messages: NewMessage[], options?: AppendTurnOptions): Promise<AppendTurnResult>;
  /** Opens (creates when missing) the user's session, as a turn's start does, without claiming a run. */
  openSession(userId: string, sessionId: string, title: string): Promise<{ created: boolean }>;
  reads: SessionReads;
  writes: SessionWrites;
  getSessionMessages: SessionReads['getSessionMessages'];
  listSessionInfos: SessionReads['listSessionInfos'];
}

export function sessionStorage(app: INestApplicationContext): SessionStorage {
  const dataSource = app.get(DataSource);
  const reads = app.get(SessionReads);
  const writes = app.get(SessionWrites);
  return {
    reads,
    writes,
    async appendTurn(userId, sessionId, messages, options = {}) {
      const stored = await transactionKnowingCommit(dataSource, (manager) => writes.appendTurn(manager, userId, sessionId, messages, options));
      await writes.turnCommitted(userId, sessionId);
      return stored;
    },
    openSession: (userId, sessionId, title) => transactionKnowingCommit(dataSource, (manager) => writes.open(manager, userId, sessionId, title)),
    getSessionMessages: (userId, sessionId) => reads.getSessionMessages(userId, sessionId),
    listSessionInfos: (userId, page) => reads.listSessionInfos(userId, page),
  };
}
