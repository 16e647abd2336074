import { trustedRunEvent } from './run-event.js';
import { FlushRounds, RunEventStream } from './run-event-stream.js';

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

describe('FlushRounds', () => {
  /** One turn of the event loop: what a read of the shared tail would come in. */
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  /** `count` streams drained through `rounds`, each write taking a millisecond of `clock`; the ids of each stream's writes. */
  function drainedStreams(count: number, rounds: FlushRounds, clock: { ms: number }): { streams: RunEventStream[]; writes: number[][][] } {
    const streams = Array.from({ length: count }, () => new RunEventStream());
    const writes = streams.map(() => [] as number[][]);
    streams.forEach(
      (stream, i) =>
        void stream.drainTo((batch) => {
          writes[i].push(batch.map((event) => event.id));
          clock.ms += 1;
          return undefined;
        }, rounds),
    );
    return { streams, writes };
  }

  it('runs the flushes in slices of its budget, with a turn of the event loop between slices', async () => {
    let clock = 0;
    const rounds = new FlushRounds(2, () => clock);
    const ran: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      rounds.add(() => {
        ran.push(i);
        clock += 1; // each flush takes a millisecond of the clock
      });
    }
    expect(ran).toEqual([]); // nothing in the caller's turn
    await turn();
    expect(ran).toEqual([0, 1]);
    await turn();
    expect(ran).toEqual([0, 1, 2, 3]);
    await turn();
    await turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('lets the followers not reached yet take an event that came between slices in the same write', async () => {
    const clock = { ms: 0 };
    const { streams, writes } = drainedStreams(4, new FlushRounds(1, () => clock.ms), clock);
    for (const stream of streams) stream.push(token(1));
    await turn(); // the first slice: stream 0 wrote event 1
    for (const stream of streams) stream.push(token(2)); // the next event, read between slices
    for (let i = 0; i < 6; i += 1) await turn();
    expect(writes).toEqual([[[1], [2]], [[1, 2]], [[1, 2]], [[1, 2]]]);
  });

  it("ends the run's streams after the terminal event went to all of them, not each after its own write", async () => {
    let clock = 0;
    const rounds = new FlushRounds(1, () => clock);
    const streams = Array.from({ length: 3 }, () => new RunEventStream());
    const order: string[] = [];
    const drained = streams.map((stream, i) =>
      stream
        .drainTo((batch) => {
          order.push(`write ${i}: ${batch.map((event) => event.id).join(',')}`);
          clock += 1; // a slice each
          return undefined;
        }, rounds)
        .then(() => order.push(`end ${i}`)),
    );
    for (const stream of streams) stream.push(done(1));
    await Promise.all(drained);
    expect(order).toEqual(['write 0: 1', 'write 1: 1', 'write 2: 1', 'end 0', 'end 1', 'end 2']);
  });

  it("writes the run's terminal event in the turn it came, with what waited for its round (a shutdown in between would drop it)", async () => {
    const clock = { ms: 0 };
    const { streams, writes } = drainedStreams(3, new FlushRounds(1, () => clock.ms), clock);
    for (const stream of streams) stream.push(token(1)); // waits for its round
    for (const stream of streams) stream.push(done(2));
    await Promise.resolve(); // queued microtasks only: no turn of the event loop
    expect(writes).toEqual([[[1, 2]], [[1, 2]], [[1, 2]]]);
  });
});
