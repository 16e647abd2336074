import { normalizePendingHitl, normalizeRagTrace } from '../trace/trace.normalizer.js';
import type { FeedbackRating, MessageInfo, MessageStatus, MessageType, SessionInfo } from './session.dto.js';
import { encodeCursor } from './session-cursor.js';

/** A session as the repository reads it for the list. */
export interface SessionRow {
  id: string;
  title: string;
  created_at: Date;
  updated_at: Date;
  updated_micros: string;
  message_count: number;
  pending_hitl: unknown;
  /** The run in flight, kept on the session by the chat module with the run's start and end. */
  active_run_id: string | null;
  active_run_started_at: Date | null;
  /** The session metadata's SESSION_COLLECTION_IDS_KEY, as stored. */
  collection_ids: unknown;
}

/** A message as the repository reads it. */
export interface MessageRow {
  id: string;
  seq: number;
  type: MessageType;
  status: MessageStatus;
  run_id: string | null;
  content: string;
  rag_trace: unknown;
  tools: unknown;
  created_at: Date;
  feedback_rating: FeedbackRating | null;
  feedback_comment: string | null;
  feedback_updated_at: Date | null;
}

export interface SessionPage {
  sessions: SessionInfo[];
  next_cursor: string | null;
}

export interface MessagePage {
  messages: MessageInfo[];
  /** The seq to pass as `before` for the older page; null when the page starts the conversation. */
  next_before: number | null;
}

export function toMessageInfo(row: MessageRow): MessageInfo {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    status: row.status,
    run_id: row.run_id,
    content: row.content,
    timestamp: row.created_at.toISOString(),
    rag_trace: normalizeRagTrace(row.rag_trace),
    tools: toolNames(row.tools),
    feedback:
      row.feedback_rating && row.feedback_updated_at ? { rating: row.feedback_rating, comment: row.feedback_comment, updated_at: row.feedback_updated_at.toISOString() } : null,
  };
}

/** A stored list of tool names (none when it is not one: cached before the column existed). */
function toolNames(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
}

/** Traces in records read from the cache or written by older versions are normalized again. */
export function normalizeMessageRecords(records: MessageInfo[]): MessageInfo[] {
  return records.map((record) => ({ ...record, rag_trace: normalizeRagTrace(record.rag_trace), tools: toolNames(record.tools) }));
}

/** The session metadata key of the knowledge collections saved for its turns (an array of collection ids; absent: none saved). */
export const SESSION_COLLECTION_IDS_KEY = 'collection_ids';

/** The collections saved in a session's metadata value, or null when none are (or the value is not a list of strings). */
export function savedCollectionIds(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string') ? (value as string[]) : null;
}

export function toSessionInfo(row: SessionRow): SessionInfo {
  return {
    session_id: row.id,
    title: row.title,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    message_count: row.message_count,
    pending_hitl: normalizePendingHitl(row.pending_hitl),
    active_run: row.active_run_id && row.active_run_started_at ? { run_id: row.active_run_id, started_at: row.active_run_started_at.toISOString() } : null,
    collection_ids: savedCollectionIds(row.collection_ids),
  };
}

/** The first `limit` rows as a page; `rows` holds one more when another page follows. */
export function toSessionPage(rows: SessionRow[], limit: number): SessionPage {
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  return {
    sessions: pageRows.map(toSessionInfo),
    next_cursor: rows.length > limit && last ? encodeCursor({ updatedMicros: last.updated_micros, id: last.id }) : null,
  };
}
