import type { Response } from 'express';
import { SseTransport, SseWriter } from '../../common/sse-stream.js';

/** The headers of a LangGraph run stream (the service's SSE headers) naming the run. */
function lgSseTransport(heartbeatMs: number, runPath: string | null): SseTransport {
  return {
    headers: [
      ['Content-Type', 'text/event-stream; charset=utf-8'],
      ['Cache-Control', 'no-cache, no-transform'],
      ['Connection', 'close'],
      ['X-Accel-Buffering', 'no'],
      ...(runPath ? ([['Content-Location', runPath]] as Array<[string, string]>) : []),
      // Relative to the API's base URL, without /langgraph: the SDK reconnects to `${apiUrl}${Location}`.
      ...(runPath?.startsWith('/threads/') ? ([['Location', `${runPath}/stream`]] as Array<[string, string]>) : []),
    ],
    heartbeatComment: 'heartbeat',
    heartbeatMs,
  };
}

export function lgSseWriter(res: Response, heartbeatMs: number, runPath: string | null): SseWriter {
  return new SseWriter(res, lgSseTransport(heartbeatMs, runPath));
}

/** Where a run is, relative to the API's base URL (Content-Location). */
export function runPathOf(threadId: string | null, runId: string): string {
  return threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
}
