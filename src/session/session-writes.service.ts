import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { FeedbackRating, MessageInfo, SessionInfo } from './session.dto.js';
import { NotAnAnswerError, SessionNotFoundError } from './session.errors.js';
import { toMessageInfo, toSessionInfo } from './session-mapping.js';
import { clampTitle, defaultTitle } from './session-title.js';
import { MessageRepository, NewMessage } from './message.repository.js';
import { SessionReads } from './session-reads.service.js';
import { SessionRepository } from './session.repository.js';

export interface AppendTurnOptions {
  /** Used only when the session is new or has no title yet. */
  title?: string;
  /** Shallow-merged into the session's metadata. */
  metadata?: Record<string, unknown>;
  /**
   * False for turns of a session opened with `open`: a session deleted
   * meanwhile stays deleted and the append fails with SessionNotFoundError.
   */
  createIfMissing?: boolean;
}

export interface AppendTurnResult {
  session_id: string;
  /** Sequence numbers given to the new messages, in order. */
  seqs: number[];
  message_count: number;
  created: boolean;
}

/**
 * Changes of sessions and their transcripts. A turn's changes run inside
 * the transaction of the use case that commits the turn (`manager`), which
 * calls `turnCommitted` once it committed; the edits of a session (rename,
 * feedback, delete, metadata) are one statement each. Every change moves the
 * versions the cached reads check in the same statement.
 */
@Injectable()
export class SessionWrites {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly messages: MessageRepository,
    private readonly reads: SessionReads,
  ) {}

  /**
   * Opens the session a turn is about to run in: creates it (with `title`)
   * when it does not exist, so the session exists — for its owner only —
   * from the moment its first turn starts. Throws SessionNotFoundError when
   * it belongs to someone else.
   */
  async open(manager: EntityManager, userId: string, sessionId: string, title: string): Promise<{ created: boolean }> {
    // No cache delete afterwards: the list's version moves with a new session, so a cached list is no longer served.
    return this.sessions.open(manager, userId, sessionId, clampTitle(title));
  }

  /**
   * Appends one turn's messages after the last one (finding or creating the
   * session unless `createIfMissing` is false) inside the caller's
   * transaction. The session row lock orders concurrent turns, so sequence
   * numbers never collide or skip; earlier messages are never rewritten.
   */
  async appendTurn(manager: EntityManager, userId: string, sessionId: string, messages: NewMessage[], options: AppendTurnOptions = {}): Promise<AppendTurnResult> {
    const title = clampTitle(options.title ?? defaultTitle(messages));
    const created = options.createIfMissing === false ? false : await this.sessions.createIfMissing(manager, userId, sessionId, title);
    const messageCount = await this.sessions.recordAppend(manager, userId, sessionId, messages.length, options.metadata ?? {}, title);
    if (messageCount === null) throw new SessionNotFoundError(sessionId);
    const firstSeq = messageCount - messages.length + 1;
    const seqs = messages.map((_, i) => firstSeq + i);
    await this.messages.insert(manager, sessionId, seqs, messages);
    return { session_id: sessionId, seqs, message_count: messageCount, created };
  }

  /** After a turn's transaction committed: drops the cached copies it made out of date. */
  async turnCommitted(userId: string, sessionId: string): Promise<void> {
    await this.reads.forget(userId, sessionId);
  }

  /** Names the session's run in flight, inside the transaction that claims the run. */
  async runStarted(manager: EntityManager, sessionId: string, runId: string): Promise<void> {
    await this.sessions.setActiveRun(manager, sessionId, runId);
  }

  /** Clears the sessions' run in flight where it is one of these, inside the transaction that ends the runs. */
  async runsEnded(manager: EntityManager, ended: Array<{ sessionId: string; runId: string }>): Promise<void> {
    await this.sessions.clearActiveRuns(manager, ended);
  }

  /** Takes the sessions' row locks first in a transaction that ends their runs (see SessionRepository.lock). */
  async lockForRunEnd(manager: EntityManager, sessionIds: string[]): Promise<void> {
    await this.sessions.lock(manager, sessionIds);
  }

  /** Shallow-merges into the session's metadata without touching updated_at. */
  async mergeMetadata(userId: string, sessionId: string, patch: Record<string, unknown>): Promise<void> {
    await this.sessions.mergeMetadata(userId, sessionId, patch);
    await this.reads.forget(userId);
  }

  /**
   * Renames the user's session and (or) sets the knowledge collections its
   * turns search (null: none saved), stored as given: the caller trims and
   * validates the title and checks the collections. Returns the session;
   * null when the user has no such session. `updated_at` stays: neither
   * moves the session up the list.
   */
  async updateSession(userId: string, sessionId: string, changes: { title?: string; collectionIds?: string[] | null }): Promise<SessionInfo | null> {
    const title = changes.title === undefined ? undefined : clampTitle(changes.title);
    if (!(await this.sessions.update(userId, sessionId, { title, collectionIds: changes.collectionIds }))) return null;
    await this.reads.forget(userId);
    const [row] = await this.sessions.list(userId, 1, { sessionId });
    return row ? toSessionInfo(row) : null;
  }

  /**
   * Sets (or, with null, clears) the owner's feedback on one message of the
   * session and returns the message; null when the user has no such session
   * or the message is not in it. Feedback is set on answers only: on another
   * message (the user's own) it throws NotAnAnswerError.
   */
  async setMessageFeedback(userId: string, sessionId: string, messageId: string, feedback: { rating: FeedbackRating; comment: string | null } | null): Promise<MessageInfo | null> {
    const row = await this.messages.setFeedback(userId, sessionId, messageId, feedback);
    if (!row && feedback) {
      const type = await this.messages.typeOf(userId, sessionId, messageId);
      if (type !== null && type !== 'ai') throw new NotAnAnswerError(messageId, type);
    }
    if (!row) return null;
    await this.reads.forgetTranscript(userId, sessionId);
    return toMessageInfo(row);
  }

  /**
   * Deletes the session and both cache keys; false when there was none. Its
   * messages and runs go by cascade, and its runs' checkpoints with them (a
   * trigger). A turn still running in it cannot bring it back: its commit
   * finds no session and fails.
   */
  async deleteSession(userId: string, sessionId: string): Promise<boolean> {
    const deleted = await this.sessions.delete(userId, sessionId);
    await this.reads.forget(userId, sessionId);
    return deleted;
  }
}
