import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { InProcessIngestQueue, Schedule } from './in-process-ingest-queue.js';
import { IngestTask, PermanentIngestError } from './ingest-queue.js';

function deferred<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Lets every promise chain the queue started settle. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A queue whose retries wait on `retries` (run by the test) instead of timers, and whose events are recorded. */
function queueUnderTest() {
  const moved: string[] = [];
  const progress: Array<[string, unknown]> = [];
  const retries: Array<{ ms: number; run: () => void; cancelled: boolean }> = [];
  const schedule: Schedule = (run, ms) => {
    const retry = { ms, run, cancelled: false };
    retries.push(retry);
    return () => (retry.cancelled = true);
  };
  const queue = new InProcessIngestQueue({ moved: (id) => moved.push(id), progress: (id, data) => progress.push([id, data]) }, { schedule });
  return { queue, moved, progress, retries };
}

/** A process function whose attempts the test ends one by one. */
function controlledWorker() {
  const attempts: Array<{ task: IngestTask; end: ReturnType<typeof deferred> }> = [];
  const process = (task: IngestTask) => {
    const end = deferred();
    attempts.push({ task, end });
    return end.promise;
  };
  return { attempts, process };
}

describe('InProcessIngestQueue', () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    jest.useRealTimers();
  });

  it('runs at most `concurrency` jobs at once, oldest first, and the next as soon as one ends', async () => {
    const { queue } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 2);
    for (const id of ['a', 'b', 'c']) await queue.add(id, 3);
    await settled();
    expect(worker.attempts.map((a) => a.task.id)).toEqual(['a', 'b']);

    worker.attempts[1].end.resolve(null);
    await settled();
    expect(worker.attempts.map((a) => a.task.id)).toEqual(['a', 'b', 'c']);
    expect(await Promise.all(['a', 'b', 'c'].map((id) => queue.hold(id)))).toEqual(['held', 'absent', 'held']);
  });

  it('runs nothing without a worker (KNOWLEDGE_INGEST_CONCURRENCY=0), and holds its jobs', async () => {
    const { queue } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 0);
    await queue.add('a', 3);
    await settled();
    expect({ started: worker.attempts.length, hold: await queue.hold('a') }).toEqual({ started: 0, hold: 'held' });
  });

  it('holds a job once: adding a job it holds again does not run it twice', async () => {
    const { queue } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 2);
    await queue.add('a', 3);
    await queue.add('a', 3);
    await settled();
    expect(worker.attempts).toHaveLength(1);
  });

  it('tries a failing job again with exponential backoff (1 s, 2 s), then fails it for good', async () => {
    const { queue, retries, moved } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('a', 3);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await settled();
      expect(worker.attempts).toHaveLength(attempt + 1);
      expect(worker.attempts[attempt].task).toMatchObject({ id: 'a', attemptsMade: attempt, maxAttempts: 3 });
      worker.attempts[attempt].end.reject(new Error('the embeddings endpoint is down'));
      await settled();
      if (attempt < 2) {
        expect(retries.map((r) => r.ms)).toEqual([1000, 2000].slice(0, attempt + 1));
        // Until its backoff has passed, the job waits, held: the reconciler leaves it alone.
        expect(await queue.hold('a')).toBe('held');
        expect(worker.attempts).toHaveLength(attempt + 1);
        retries[attempt].run();
      }
    }
    expect({ retries: retries.length, attempts: worker.attempts.length, hold: await queue.hold('a') }).toEqual({ retries: 2, attempts: 3, hold: 'absent' });
    // Queued; started, delayed and queued again, twice; started and failed.
    expect(moved).toHaveLength(9);
  });

  it('does not try a job again after a PermanentIngestError', async () => {
    const { queue, retries } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('a', 5);
    await settled();
    worker.attempts[0].end.reject(new PermanentIngestError('ingest job a has no stored upload'));
    await settled();
    expect({ retries: retries.length, attempts: worker.attempts.length, hold: await queue.hold('a') }).toEqual({ retries: 0, attempts: 1, hold: 'absent' });
  });

  it('passes an attempt’s progress to its watchers, and every move of the job', async () => {
    const { queue, moved, progress } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('a', 1);
    await settled();
    await worker.attempts[0].task.reportProgress({ stage: 'embedding', done: 3, total: 10 });
    worker.attempts[0].end.resolve({ document_id: 'a', duplicate: false });
    await settled();
    expect(progress).toEqual([['a', { stage: 'embedding', done: 3, total: 10 }]]);
    expect(moved).toEqual(['a', 'a', 'a']); // queued, started, completed
  });

  it('does not run a job removed while it waits, nor retry one removed while under way', async () => {
    const { queue, retries } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('a', 3);
    await queue.add('b', 3);
    await settled();
    await queue.remove('b');
    await queue.remove('a');
    worker.attempts[0].end.reject(new Error('passing'));
    await settled();
    expect({ started: worker.attempts.map((a) => a.task.id), retries: retries.length, a: await queue.hold('a'), b: await queue.hold('b') }).toEqual({
      started: ['a'],
      retries: 0,
      a: 'absent',
      b: 'absent',
    });
  });

  it('at shutdown, waits for the attempts under way and starts no other', async () => {
    const { queue, retries } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('retrying', 3);
    await settled();
    worker.attempts[0].end.reject(new Error('passing'));
    await settled();
    expect(retries).toHaveLength(1);
    await queue.add('running', 3);
    await queue.add('waiting', 3);
    await settled();

    let stopped = false;
    const stopping = queue.stopWorker(60_000).then(() => (stopped = true));
    await settled();
    expect({ stopped, retryCancelled: retries[0].cancelled }).toEqual({ stopped: false, retryCancelled: true });
    worker.attempts[1].end.resolve(null);
    await stopping;
    await settled();
    expect(worker.attempts.map((a) => a.task.id)).toEqual(['retrying', 'running']);
  });

  it('at shutdown, stops waiting for an attempt once the budget is spent', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { queue } = queueUnderTest();
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('stuck', 3);
    await settled();
    let stopped = false;
    const stopping = queue.stopWorker(5000).then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(4999);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await stopping;
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('did not finish in time'));
  });

  it('uses real timers for its backoff by default', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const queue = new InProcessIngestQueue({ moved: () => undefined, progress: () => undefined });
    const worker = controlledWorker();
    queue.startWorker(worker.process, 1);
    await queue.add('a', 2);
    await settled();
    worker.attempts[0].end.reject(new Error('passing'));
    await settled();
    await jest.advanceTimersByTimeAsync(999);
    expect(worker.attempts).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    await settled();
    expect(worker.attempts).toHaveLength(2);
  });
});
