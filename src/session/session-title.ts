import { TITLE_MAX_LENGTH } from './session.dto.js';

export { TITLE_MAX_LENGTH };

const TITLE_LENGTH = 60;
const ELLIPSIS = '…';

/**
 * A session's title from its first message: one line, at most 60 characters.
 * A longer message is cut at the last space before that (the text between
 * words, unless that leaves less than half of it, as in Chinese, which has no
 * spaces) and ends with "…".
 */
export function titleFrom(text: string): string {
  const characters = Array.from(text.replace(/\s+/g, ' ').trim());
  if (characters.length === 0) return 'New conversation';
  if (characters.length <= TITLE_LENGTH) return characters.join('');
  const room = characters.slice(0, TITLE_LENGTH - 1);
  const space = room.lastIndexOf(' ');
  const kept = space >= TITLE_LENGTH / 2 ? room.slice(0, space) : room;
  return kept.join('').trimEnd() + ELLIPSIS;
}

/** The title of a session created by these messages: from the first human message (or the first message). */
export function defaultTitle(messages: ReadonlyArray<{ type: string; content: string }>): string {
  const first = messages.find((m) => m.type === 'human') ?? messages[0];
  return titleFrom(first?.content ?? '');
}

/** The title cut to what the column holds, in code points. */
export function clampTitle(title: string): string {
  return Array.from(title).slice(0, TITLE_MAX_LENGTH).join('');
}
