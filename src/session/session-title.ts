import { TITLE_MAX_LENGTH } from './session.dto.js';

export { TITLE_MAX_LENGTH };

/** A session's title from its first message: one line, at most 60 characters. */
export function titleFrom(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return Array.from(oneLine).slice(0, 60).join('') || 'New conversation';
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
