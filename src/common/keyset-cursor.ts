import { CodedError } from './coded-error.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * At most 16 digits of microseconds since the epoch (until the year 2286):
 * PostgreSQL turns every such value into a timestamptz, whereas a longer one
 * can overflow its bigint or timestamp range (an error, not an empty page).
 */
const MICROS = /^\d{1,16}$/;

/** Position after a row in a newest-first list: its time in microseconds since the epoch, and its id (the tie-break). */
export interface KeysetCursor {
  micros: string;
  id: string;
}

export class InvalidCursorError extends CodedError {
  readonly code = 'invalid_cursor';
  constructor() {
    super('cursor is invalid: pass the next_cursor of a previous page');
  }
}

/** The opaque `next_cursor` of a page. */
export function encodeKeysetCursor(cursor: KeysetCursor): string {
  return Buffer.from(`${cursor.micros}.${cursor.id}`, 'utf8').toString('base64url');
}

/** A `cursor` a client sent back; InvalidCursorError (400) for anything that is not one. */
export function decodeKeysetCursor(raw: string): KeysetCursor {
  const decoded = Buffer.from(raw, 'base64url').toString('utf8');
  const [micros, id, ...rest] = decoded.split('.');
  if (rest.length > 0 || !MICROS.test(micros ?? '') || !UUID.test(id ?? '')) throw new InvalidCursorError();
  return { micros, id };
}
