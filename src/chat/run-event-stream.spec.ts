import { trustedRunEvent } from './run-event.js';
import { RunEventStream } from './run-event-stream.js';

const token = (id: number) => trustedRunEvent(id, 'token', { text: `t${id}` });
const done = (id: number) => trustedRunEvent(id, 'done', { response: 'all', session_id: 's' });

async function read(stream: RunEventStream, into: number[]): Promise<void> {
  for await (const event of stream) into.push(event.id);
}

describe('RunEventStream', () => {
  it('yields what was pushed before and after the reader came, in order, and ends after the terminal event, stopping its source', async () => {
    const stream = new RunEventStream();
    let stopped = 0;
    stream.push(token(1));
    stream.push(token(2));
    stream.attach(() => (stopped += 1));
    expect(stream.backlog).toBe(2);
    const ids: number[] = [];
    const reading = read(stream, ids);
    await new Promise(setImmediate);
    stream.push(token(3));
    stream.push(done(4));
    stream.push(token(5)); // nothing after the terminal event
    await reading;
    expect(ids).toEqual([1, 2, 3, 4]);
    expect(stopped).toBeGreaterThanOrEqual(1);
    expect(stream.abandoned).toBe(false);
  });

  it('ends at once when the client leaves, dropping what it had not read, and stops its source', async () => {
    const left = new AbortController();
    const stream = new RunEventStream(left.signal);
    let stopped = false;
    stream.attach(() => (stopped = true));
    const ids: number[] = [];
    const reading = read(stream, ids);
    stream.push(token(1));
    await new Promise(setImmediate);
    left.abort();
    stream.push(token(2));
    await reading;
    expect(ids).toEqual([1]);
    expect(stopped).toBe(true);
    expect(stream.abandoned).toBe(true);
  });

  it('stops a source attached after the client left', () => {
    const left = new AbortController();
    left.abort();
    const stream = new RunEventStream(left.signal);
    let stopped = false;
    stream.attach(() => (stopped = true));
    expect(stopped).toBe(true);
  });

  it('hands the events to a writer in batches: those of one turn of the event loop together, those that came during a slow write next', async () => {
    const stream = new RunEventStream();
    for (const id of [1, 2]) stream.push(token(id));
    const batches: number[][] = [];
    let release!: () => void;
    const draining = stream.drainTo((batch) => {
      batches.push(batch.map((event) => event.id));
      if (batches.length === 2) return new Promise<void>((resolve) => (release = resolve));
      return undefined;
    });
    expect(batches).toEqual([[1, 2]]);
    stream.push(token(3));
    stream.push(token(4));
    await new Promise(setImmediate);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    // A full socket: what comes meanwhile waits, and goes in one batch, up to the terminal event.
    stream.push(token(5));
    stream.push(done(6));
    stream.push(token(7));
    await new Promise(setImmediate);
    expect(batches).toHaveLength(2);
    release();
    await draining;
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(stream.abandoned).toBe(false);
  });

  it('stops handing events over when the client leaves, and resolves', async () => {
    const left = new AbortController();
    const stream = new RunEventStream(left.signal);
    let stopped = 0;
    stream.attach(() => (stopped += 1));
    const batches: number[][] = [];
    const draining = stream.drainTo((batch) => void batches.push(batch.map((event) => event.id)));
    stream.push(token(1));
    left.abort();
    stream.push(token(2));
    await draining;
    expect(batches).toEqual([]);
    expect(stopped).toBe(1);
    expect(stream.abandoned).toBe(true);
  });
});
