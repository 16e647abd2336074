/**
 * Whether spans may carry message content (prompts, answers, tool arguments
 * and results, queries, passages): OTEL_GENAI_CAPTURE_CONTENT, off by
 * default, since a trace backend is rarely cleared to hold users' text.
 * Set once per application (setupApp), read by the span helpers.
 */
let capturing = false;

export function setContentCapture(enabled: boolean): void {
  capturing = enabled;
}

export function capturesContent(): boolean {
  return capturing;
}

/** Longest text put in one attribute: a span is no place for a whole document. */
export const CONTENT_MAX_CHARS = 8000;

/** `text` cut to CONTENT_MAX_CHARS characters (never inside a surrogate pair). */
export function boundedContent(text: string): string {
  if (text.length <= CONTENT_MAX_CHARS) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[CONTENT_MAX_CHARS - 1]) ? CONTENT_MAX_CHARS - 1 : CONTENT_MAX_CHARS;
  return `${text.slice(0, cut)}…`;
}
