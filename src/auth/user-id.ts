import { hasControlCharacter, hasVisibleCharacter, storableTextProblem } from '../common/storable-text.js';

/** The user_id columns are varchar(128). */
export const MAX_USER_ID_LENGTH = 128;

/**
 * Why `sub` cannot serve as a user id, or null when it can. A user id is
 * stored and compared exactly as sent, so it must be text PostgreSQL keeps
 * unchanged: a lone surrogate would be stored as U+FFFD (and so would its
 * look-alikes, which would then share one user's sessions) and NUL is refused
 * by the database. Control characters and invisible-only ids are refused too:
 * they cannot be told apart in logs and listings.
 */
export function userIdProblem(sub: unknown): string | null {
  if (typeof sub !== 'string' || sub.length === 0) return 'must name the user (a non-empty string)';
  if (sub.length > MAX_USER_ID_LENGTH) return `must be at most ${MAX_USER_ID_LENGTH} characters long`;
  const storable = storableTextProblem(sub);
  if (storable) return storable;
  if (hasControlCharacter(sub)) return 'contains a control character';
  if (!hasVisibleCharacter(sub)) return 'must contain a visible character (not only white space or invisible characters)';
  return null;
}
