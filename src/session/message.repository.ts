import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { toStorableText } from '../common/storable-text.js';
import { sqlRows } from '../database/sql.js';
import { normalizeAndValidateRagTrace } from '../trace/trace.normalizer.js';
import type { FeedbackRating, MessageStatus, MessageType } from './session.dto.js';
import type { MessageRow } from './session-mapping.js';

/** A message to store; `rag_trace` is normalized before it is written. */
export interface NewMessage {
  type: MessageType;
  content: string;
  rag_trace?: unknown;
  /** `complete` unless given: what a cancelled or failed turn keeps says so. */
  status?: MessageStatus;
  /** The run that stores the message. */
  run_id?: string;
  /** The tools the turn ran, in the order first called (an answer's; none unless given). */
  tools?: string[];
}

/** The columns a MessageRow is read from, on `chat_messages` aliased `m`. */
const MESSAGE_COLUMNS = `m.public_id::text AS id, m.seq, m.type, m.status, m.run_id::text AS run_id, m.content, m.rag_trace, m.tools,
  m.created_at, m.feedback_rating, m.feedback_comment, m.feedback_updated_at`;

type Missing<T> = { [K in keyof T]: null };

/** The `chat_messages` table (read with its session's owner, so another user's session looks empty or missing). */
@Injectable()
export class MessageRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts the messages at the given sequence numbers, inside the caller's transaction. */
  async insert(manager: EntityManager, sessionId: string, seqs: number[], messages: NewMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await manager.query(
      `INSERT INTO chat_messages (session_id, seq, type, content, rag_trace, status, run_id, tools, created_at)
       SELECT $1, t.seq, t.type, t.content, t.rag_trace, t.status, t.run_id, t.tools, clock_timestamp()
         FROM unnest($2::int[], $3::varchar[], $4::text[], $5::jsonb[], $6::varchar[], $7::uuid[], $8::jsonb[])
              AS t(seq, type, content, rag_trace, status, run_id, tools)`,
      [
        sessionId,
        seqs,
        messages.map((m) => m.type),
        // Edge validation refuses such input; what the model writes is normalized rather than lost.
        messages.map((m) => toStorableText(m.content)),
        messages.map((m) => {
          const trace = normalizeAndValidateRagTrace(m.rag_trace);
          return trace ? JSON.stringify(trace) : null;
        }),
        messages.map((m) => m.status ?? 'complete'),
        messages.map((m) => m.run_id ?? null),
        messages.map((m) => JSON.stringify(m.tools ?? [])),
      ],
    );
  }

  /** The whole transcript with the session's version; null when the user has no such session. */
  async transcript(userId: string, sessionId: string, db: DataSource = this.dataSource): Promise<{ version: string; rows: MessageRow[] } | null> {
    const rows = await sqlRows<{ version: string } & (MessageRow | Missing<MessageRow>)>(
      db,
      `SELECT s.version::text AS version, ${MESSAGE_COLUMNS}
         FROM chat_sessions s
         LEFT JOIN chat_messages m ON m.session_id = s.id
        WHERE s.id = $1 AND s.user_id = $2
        ORDER BY m.seq`,
      [sessionId, userId],
    );
    if (rows.length === 0) return null;
    return { version: rows[0].version, rows: rows.filter((row): row is { version: string } & MessageRow => row.id !== null) };
  }

  /**
   * Up to `limit` messages before seq `before` (all without `limit`), newest
   * first; null when the user has no such session.
   */
  async newestBefore(userId: string, sessionId: string, before: number, limit: number | null): Promise<MessageRow[] | null> {
    return (await this.newestBeforeOn(this.dataSource, userId, sessionId, before, limit))?.rows ?? null;
  }

  /** The same page read on `db` (the read replica, say), with the transcript's version as `db` holds it. */
  async newestBeforeOn(db: DataSource, userId: string, sessionId: string, before: number, limit: number | null): Promise<{ version: string; rows: MessageRow[] } | null> {
    const rows = await sqlRows<{ transcript_version: string } & (MessageRow | Missing<MessageRow>)>(
      db,
      `SELECT s.version::text AS transcript_version, p.*
         FROM chat_sessions s
         LEFT JOIN LATERAL (
           SELECT ${MESSAGE_COLUMNS} FROM chat_messages m
            WHERE m.session_id = s.id AND m.seq < $3
            ORDER BY m.seq DESC
            LIMIT $4
         ) p ON true
        WHERE s.id = $1 AND s.user_id = $2`,
      [sessionId, userId, before, limit],
    );
    if (rows.length === 0) return null;
    const version = rows[0].transcript_version;
    return {
      version,
      rows: rows.flatMap(({ transcript_version: _, ...row }) => (row.id === null ? [] : [row as MessageRow])),
    };
  }

  /** Messages with fromSeq < seq <= toSeq, in order (the caller checked the session's owner). */
  async range(sessionId: string, fromSeq: number, toSeq: number): Promise<MessageRow[]> {
    return await sqlRows<MessageRow>(
      this.dataSource,
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m
        WHERE m.session_id = $1 AND m.seq > $2 AND m.seq <= $3 ORDER BY m.seq`,
      [sessionId, fromSeq, toSeq],
    );
  }

  /**
   * Sets (or, with null, clears) the feedback on one answer (an `ai`
   * message) of the user's session, moving the transcript version in the
   * same statement; null when the user has no such session or no such answer
   * in it. Clearing takes any message of the session (a no-op on one that
   * never had feedback).
   */
  async setFeedback(userId: string, sessionId: string, messageId: string, feedback: { rating: FeedbackRating; comment: string | null } | null): Promise<MessageRow | null> {
    const [row] = await sqlRows<MessageRow>(
      this.dataSource,
      `WITH session AS (
         UPDATE chat_sessions SET version = nextval('chat_cache_version_seq')
          WHERE id = $1 AND user_id = $2
            AND EXISTS (SELECT 1 FROM chat_messages WHERE session_id = $1 AND public_id = $3 AND ($4::varchar IS NULL OR type = 'ai'))
         RETURNING id
       )
       UPDATE chat_messages m
          SET feedback_rating = $4::varchar,
              feedback_comment = $5::text,
              feedback_updated_at = CASE WHEN $4::varchar IS NULL THEN NULL ELSE clock_timestamp() END
         FROM session
        WHERE m.session_id = session.id AND m.public_id = $3 AND ($4::varchar IS NULL OR m.type = 'ai')
       RETURNING ${MESSAGE_COLUMNS}`,
      [sessionId, userId, messageId, feedback?.rating ?? null, feedback?.comment ?? null],
    );
    return row ?? null;
  }

  /** The type of one message of the user's session; null when the user has no such session or the message is not in it. */
  async typeOf(userId: string, sessionId: string, messageId: string): Promise<MessageType | null> {
    const [row] = await sqlRows<{ type: MessageType }>(
      this.dataSource,
      `SELECT m.type FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id
        WHERE s.id = $1 AND s.user_id = $2 AND m.public_id = $3`,
      [sessionId, userId, messageId],
    );
    return row?.type ?? null;
  }
}
