import { decodeKeysetCursor, encodeKeysetCursor } from '../common/keyset-cursor.js';

/** Position after a session in the newest-first list: its update time in microseconds since the epoch, and its id. */
export interface SessionCursor {
  updatedMicros: string;
  id: string;
}

export function encodeCursor(cursor: SessionCursor): string {
  return encodeKeysetCursor({ micros: cursor.updatedMicros, id: cursor.id });
}

/** Throws InvalidCursorError (400) for anything that is not a cursor of this list. */
export function decodeCursor(raw: string): SessionCursor {
  const { micros, id } = decodeKeysetCursor(raw);
  return { updatedMicros: micros, id };
}
