import { serviceSseTransport, type SseTransport } from '../common/sse-stream.js';
import type { RunEvent, RunEventType } from './run-event.js';

export type { RunEvent, RunEventArgs, RunEventData, RunEventOf, RunEventType } from './run-event.js';
export { isTerminal, TERMINAL_EVENTS } from './run-event.js';

export const SSE_EVENT_TYPES = ['metadata', 'step', 'token', 'tool', 'hitl', 'trace', 'done', 'error'] as const;
export type SseEventType = (typeof SSE_EVENT_TYPES)[number];

/** The list above names exactly the events of the union (the OpenAPI models): a difference fails the typecheck. */
type SameNames = [SseEventType] extends [RunEventType] ? ([RunEventType] extends [SseEventType] ? true : never) : never;
const sameNames: SameNames = true;
void sameNames;

/** Each event's text, made once: an event followed by many clients on one instance is the same object for all of them. */
const formatted = new WeakMap<RunEvent, string>();

export function formatSse(event: RunEvent): string {
  let text = formatted.get(event);
  if (text === undefined) {
    text = `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
    formatted.set(event, text);
  }
  return text;
}

/** The transport of this service's own event streams: `: stream open` first, `: heartbeat` on a fixed clock. */
export function chatSseTransport(heartbeatMs: number): SseTransport {
  return serviceSseTransport(heartbeatMs);
}

export const LAST_EVENT_ID_RULE = 'Last-Event-ID must be the id of the last event received: a non-negative integer of at most 9 digits';

/**
 * Parses a Last-Event-ID header: "absent" when missing or empty (replay from
 * the start), the id when it is a non-negative integer of at most 9 digits,
 * "invalid" for anything else — which must not silently replay from the start.
 */
export function parseLastEventId(raw: unknown): number | 'absent' | 'invalid' {
  if (raw === undefined) return 'absent';
  if (typeof raw !== 'string') return 'invalid'; // repeated headers, for one
  const value = raw.trim();
  if (value === '') return 'absent';
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : 'invalid';
}
