import { isTerminal, type RunEvent } from './run-event.js';

/** How long one slice of stream flushes may hold the event loop before the flushes left wait for the next turn. */
const FLUSH_SLICE_MS = 2;

/**
 * The flushes of every drained stream of the process, run in turn, in
 * slices of at most FLUSH_SLICE_MS with a turn of the event loop between
 * them. With a thousand followers of one run, writing an event to all of
 * them takes ten milliseconds of socket writes; done in one go, events that
 * arrive meanwhile wait for the whole round before theirs starts. Between
 * slices the tail's reads are taken in, so the followers not reached yet
 * get the newer events in the same write, and a follower waits about one
 * round of writes, not two.
 */
export class FlushRounds {
  private queue: Array<() => void> = [];
  private next = 0;
  private scheduled = false;

  constructor(
    private readonly sliceMs = FLUSH_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  add(flush: () => void): void {
    this.queue.push(flush);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.runSlice);
  }

  private readonly runSlice = (): void => {
    const started = this.now();
    try {
      while (this.next < this.queue.length) {
        this.queue[this.next++]();
        if (this.now() - started >= this.sliceMs) break;
      }
    } finally {
      // Flushes added while the slice ran (streams woken again) wait at the end of the queue: each stream gets its turn.
      // (A flush that threw is not run again, and the others still get theirs.)
      this.queue.splice(0, this.next);
      this.next = 0;
      if (this.queue.length > 0) setImmediate(this.runSlice);
      else this.scheduled = false;
    }
  };
}

const flushRounds = new FlushRounds();

/**
 * One client's view of a run, as an async iterable: the events after the
 * client's last, in order, ending after the terminal event (`done`, `error`,
 * or the synthetic `error` of a lost run) or as soon as `signal` aborts (the
 * client left; the run goes on). Events that arrive while the reader is busy
 * writing (a slow socket) wait here, in order.
 */
export class RunEventStream implements AsyncIterable<RunEvent> {
  private readonly queue: RunEvent[] = [];
  private terminalQueued = false;
  private closed = false;
  /** Tells the reader there is more; `terminal` when the run's last event just came. */
  private wake: ((terminal: boolean) => void) | null = null;
  private stopSource: () => void = () => undefined;
  private readonly onAbort = () => this.close();

  constructor(private readonly signal?: AbortSignal) {
    if (signal?.aborted) this.closed = true;
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Events ready to be read; when `follow` resolves, the events its catch-up found. */
  get backlog(): number {
    return this.queue.length;
  }

  /** Whether the stream stopped before its terminal event (the signal aborted, or the reader left the loop). */
  get abandoned(): boolean {
    return this.closed && !this.terminalQueued;
  }

  /** Takes the next event of the run (from the source `attach` names). */
  push(event: RunEvent): void {
    if (this.closed || this.terminalQueued) return;
    this.queue.push(event);
    if (isTerminal(event)) {
      this.terminalQueued = true;
      this.stopSource();
    }
    this.wake?.(this.terminalQueued);
  }

  /** The function that stops the source; called at once when the stream already ended. */
  attach(stop: () => void): void {
    this.stopSource = stop;
    if (this.closed || this.terminalQueued) stop();
  }

  /** Stops reading: the source is stopped and events not read yet are dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.stopSource();
    this.wake?.(false);
  }

  /**
   * Hands the events to `write` as they come, in batches: every event that
   * arrived before the stream's turn to write (a read of the shared tail
   * delivers its events together; see FlushRounds) goes in one call,
   * without a promise per event, so one instance can carry many followers. While a
   * promise `write` returned is pending (the client's socket is full), the
   * events wait and go in the next call. Resolves after the terminal event
   * was handed over, or when the stream closes (the client left).
   */
  drainTo(write: (batch: RunEvent[]) => Promise<void> | undefined, rounds: FlushRounds = flushRounds): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let writing = false;
      let scheduled = false;
      const finish = () => {
        this.wake = null;
        this.close();
        resolve();
      };
      const flush = () => {
        scheduled = false;
        try {
          while (!writing && !this.closed && this.queue.length > 0) {
            const terminal = this.queue.findIndex(isTerminal);
            const batch = terminal < 0 ? this.queue.splice(0) : this.queue.splice(0, terminal + 1);
            const pending = write(batch);
            if (terminal >= 0) {
              // The end of the stream (and what its reader does then: closing the response) waits at the back of the
              // queue, behind the terminal writes of the run's other followers.
              if (pending) void pending.then(finish, reject);
              else rounds.add(finish);
              return;
            }
            if (pending) {
              writing = true;
              pending.then(() => {
                writing = false;
                flush();
              }, reject);
            }
          }
          if (this.closed) finish();
        } catch (error) {
          this.close();
          reject(error);
        }
      };
      this.wake = (terminal) => {
        if (writing) return;
        // The run's last event goes out in this turn, not in its round: between the two, an instance shutting down
        // would end the stream with `stopped following` and drop the terminal event that had already come.
        if (terminal) {
          queueMicrotask(flush);
          return;
        }
        if (scheduled) return;
        scheduled = true;
        rounds.add(flush);
      };
      flush();
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    try {
      while (!this.closed) {
        const event = this.queue.shift();
        if (event) {
          yield event;
          if (isTerminal(event)) return;
          continue;
        }
        await new Promise<void>((resolve) => (this.wake = () => resolve()));
        this.wake = null;
      }
    } finally {
      this.close();
    }
  }
}
