import { ApiError, type Schemas } from '../api';
import type { ChatStream, StreamEvent } from '@agentic-rag/client';

/** How often a dropped stream is reopened (with Last-Event-ID) before the turn is given up as lost. */
const MAX_RECONNECTS = 6;

export type TurnEnd = { kind: 'done'; response: string } | { kind: 'error'; data: Schemas['ErrorEvent'] } | { kind: 'aborted' };

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/**
 * Reads a run's events to its end, reopening a dropped connection with
 * `resume()` (Last-Event-ID: the server sends only what was missed, so no
 * token arrives twice). A refused request (ApiError) is thrown; `signal`
 * aborting (the user left the session) ends it quietly.
 */
export async function followTurn(first: ChatStream, onEvent: (event: StreamEvent) => void, signal: AbortSignal, onReconnecting: (reconnecting: boolean) => void): Promise<TurnEnd> {
  let stream = first;
  let failures = 0;
  for (;;) {
    let end: TurnEnd | null = null;
    try {
      for await (const event of stream) {
        if (failures > 0) {
          failures = 0;
          onReconnecting(false);
        }
        onEvent(event);
        if (event.event === 'done') end = { kind: 'done', response: event.data.response };
        if (event.event === 'error') end = { kind: 'error', data: event.data };
      }
    } catch (error) {
      if (signal.aborted) return { kind: 'aborted' };
      if (error instanceof ApiError) throw error;
      if (!stream.runId) throw error; // refused before the run started: nothing to follow
    }
    if (end) return end;
    if (signal.aborted) return { kind: 'aborted' };
    failures += 1;
    if (failures > MAX_RECONNECTS) throw new Error('The connection to the service was lost; reload the page to see the turn.');
    onReconnecting(true);
    await pause(Math.min(250 * 2 ** failures, 4000), signal);
    if (signal.aborted) return { kind: 'aborted' };
    stream = stream.resume({ signal });
  }
}
