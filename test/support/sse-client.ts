export interface ParsedEvent {
  id: number;
  event: string;
  data: any;
}

export function parseSse(text: string): { events: ParsedEvent[]; comments: string[] } {
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter(Boolean);
    if (lines.length === 0) continue;
    const fields: Record<string, string> = {};
    for (const line of lines) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else {
        const at = line.indexOf(':');
        fields[line.slice(0, at)] = line.slice(at + 1).trimStart();
      }
    }
    if (fields.event) events.push({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) });
  }
  return { events, comments };
}

/**
 * Reads an SSE response with fetch to its end. With `stopAfter`, drops the
 * connection once that many events arrived (a client going away mid-stream).
 */
export async function readSse(url: string, init: RequestInit, stopAfter?: number): Promise<{ status: number; events: ParsedEvent[]; comments: string[]; raw: string }> {
  const live = await openSse(url, init);
  if (stopAfter !== undefined) {
    await live.waitFor(() => live.events.length >= stopAfter).then(live.close, () => undefined);
  }
  await live.ended;
  return { status: live.status, events: live.events, comments: live.comments, raw: live.raw() };
}

/**
 * An SSE response read as it arrives: `waitFor` resolves when an event (or a
 * comment line) matching the predicate has arrived, so a test acts on what
 * the server sent instead of on elapsed time.
 */
export interface LiveSse {
  status: number;
  events: ParsedEvent[];
  comments: string[];
  waitFor(predicate: (event: ParsedEvent) => boolean): Promise<ParsedEvent>;
  waitForComment(text: string): Promise<void>;
  /** Resolves when the server ends the stream (or close() drops it). */
  ended: Promise<void>;
  close(): void;
  /** The complete event blocks received so far; the whole body of a response that is not an event stream. */
  raw(): string;
}

export async function openSse(url: string, init: RequestInit): Promise<LiveSse> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of [...watchers]) watcher();
  };
  let finished = false;
  let raw = '';
  const ended = (async () => {
    if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
      raw = await response.text();
      finished = true;
      notify();
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        const cut = buffer.lastIndexOf('\n\n');
        if (cut < 0) continue;
        const complete = buffer.slice(0, cut + 2);
        raw += complete;
        const parsed = parseSse(complete);
        buffer = buffer.slice(cut + 2);
        events.push(...parsed.events);
        comments.push(...parsed.comments);
        notify();
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    } finally {
      finished = true;
      notify();
    }
  })();
  const waitUntil = <T>(check: () => T | undefined, what: string) =>
    new Promise<T>((resolve, reject) => {
      const watcher = () => {
        const found = check();
        if (found !== undefined) {
          watchers.delete(watcher);
          resolve(found);
        } else if (finished) {
          watchers.delete(watcher);
          reject(new Error(`the stream ended before ${what}; events: ${events.map((e) => e.event).join(', ')}`));
        }
      };
      watchers.add(watcher);
      watcher();
    });
  return {
    status: response.status,
    events,
    comments,
    waitFor: (predicate) => waitUntil(() => events.find(predicate), 'the awaited event'),
    waitForComment: (text) => waitUntil(() => (comments.includes(text) ? true : undefined), `a "${text}" comment`).then(() => undefined),
    ended,
    close: () => controller.abort(),
    raw: () => raw,
  };
}
