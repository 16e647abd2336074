import { InvalidCursorError } from './session.errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Position after a session in the newest-first list: its update time in microseconds since the epoch, and its id. */
export interface SessionCursor {
  updatedMicros: string;
  id: string;
}

export function encodeCursor(cursor: SessionCursor): string {
  return Buffer.from(`${cursor.updatedMicros}.${cursor.id}`, 'utf8').toString('base64url');
}

/**
 * At most 16 digits of microseconds since the epoch (until the year 2286):
 * PostgreSQL turns every such value into a timestamptz, whereas a longer one
 * can overflow its bigint or timestamp range (an error, not an empty page).
 */
const MICROS = /^\d{1,16}$/;

export function decodeCursor(raw: string): SessionCursor {
  const decoded = Buffer.from(raw, 'base64url').toString('utf8');
  const [updatedMicros, id, ...rest] = decoded.split('.');
  if (rest.length > 0 || !MICROS.test(updatedMicros ?? '') || !UUID.test(id ?? '')) {
    throw new InvalidCursorError();
  }
  return { updatedMicros, id };
}
