/** One event of a `text/event-stream` body, as the SSE format defines it (before its data is parsed). */
export interface RawSseEvent {
  /** The `id` field of this event, or the last one before it (SSE's "last event id"); empty when none came. */
  id: string;
  /** The `event` field; `message` when absent. */
  event: string;
  /** The `data` lines, joined by `\n`. */
  data: string;
}

/**
 * Parses an SSE body as it arrives, whatever the chunk boundaries: lines may
 * end in LF, CR or CRLF, comments (`: heartbeat`) are skipped, `data` lines
 * are joined, and a block without `data` dispatches nothing (as in the HTML
 * standard's event stream interpretation).
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<RawSseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId = '';
  let event = '';
  let data: string[] = [];
  let pendingCr = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      // `stream: true` keeps a character split across chunks for the next one.
      buffer += decoder.decode(value, { stream: true });
      // A CR at the end of a chunk may be the first half of a CRLF split across chunks.
      if (pendingCr && buffer.startsWith('\n')) buffer = buffer.slice(1);
      pendingCr = false;
      let lineEnd: number;
      while ((lineEnd = buffer.search(/[\r\n]/)) !== -1) {
        const line = buffer.slice(0, lineEnd);
        if (buffer[lineEnd] === '\r') {
          if (lineEnd + 1 === buffer.length) pendingCr = true;
          else if (buffer[lineEnd + 1] === '\n') lineEnd += 1;
        }
        buffer = buffer.slice(lineEnd + 1);
        if (line === '') {
          if (data.length > 0) yield { id: lastId, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let fieldValue = colon === -1 ? '' : line.slice(colon + 1);
        if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
        if (field === 'data') data.push(fieldValue);
        else if (field === 'event') event = fieldValue;
        else if (field === 'id' && !fieldValue.includes('\0')) lastId = fieldValue;
      }
    }
  } finally {
    // Leaving early (break, return, a throw) closes the connection; after the end it does nothing.
    await reader.cancel().catch(() => undefined);
  }
}
