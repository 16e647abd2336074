import { SSE_EVENT_MODELS } from './sse-events.dto.js';

/*
 * A run's events as a discriminated union on `event`. Each variant's `data`
 * is the instance type of its OpenAPI model in sse-events.dto.ts, so the
 * generated event schemas and the union come from the same classes.
 */

/** The run's event names, in protocol order (the keys of SSE_EVENT_MODELS). */
export type RunEventType = keyof typeof SSE_EVENT_MODELS;

/** The `data` of each event, by name. */
export type RunEventDataMap = { [T in RunEventType]: InstanceType<(typeof SSE_EVENT_MODELS)[T]> };

export type RunEventData<T extends RunEventType> = RunEventDataMap[T];

/** One event of a run; `id` is monotonic within the run, starting at 1. */
export type RunEvent = { [T in RunEventType]: { id: number; event: T; data: RunEventData<T> } }[RunEventType];

/** The event of one name. */
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { event: T }>;

/** The arguments of one event as an emitter takes them: `emit('token', {text})`. */
export type RunEventArgs = { [T in RunEventType]: [event: T, data: RunEventData<T>] }[RunEventType];

/** Events after which a run's stream ends. */
export const TERMINAL_EVENTS: ReadonlySet<RunEventType> = new Set<RunEventType>(['done', 'error']);

export function isTerminal(event: RunEvent): event is RunEventOf<'done' | 'error'> {
  return TERMINAL_EVENTS.has(event.event);
}

/**
 * The event of a typed emit, `runEvent(3, 'token', {text})`: the arguments
 * pair the name with its data (RunEventArgs), which TypeScript cannot carry
 * into the object it builds from them, so the pairing is restated here once.
 */
export function runEvent(id: number, ...[event, data]: RunEventArgs): RunEvent {
  return { id, event, data } as RunEvent;
}

/**
 * The one place an event's `data` is taken on trust: what this service wrote
 * to the run's Redis stream (and recorded runs in specs). Everything
 * downstream reads the union.
 */
export function trustedRunEvent(id: number, event: RunEventType, data: unknown): RunEvent {
  return { id, event, data } as RunEvent;
}

/** An event as stored in the run's Redis stream (its JSON). */
export function parseRunEvent(payload: string): RunEvent {
  const { id, event, data } = JSON.parse(payload) as { id: number; event: RunEventType; data: unknown };
  return trustedRunEvent(id, event, data);
}
