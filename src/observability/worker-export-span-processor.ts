import { Worker } from 'node:worker_threads';
import { diag, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { BatchBuilder, PostedBatch } from './posted-span.js';

/** What the export worker is sent: ended spans, or a request (answered by id) to flush or shut its processors down. */
export type ToExportWorker = { kind: 'spans'; batch: PostedBatch } | { kind: 'flush' | 'shutdown'; id: number };
type FromExportWorker = { id: number; error?: string };

export interface WorkerExportOptions {
  /** The longest a span waits before it is posted to the worker. */
  postEveryMs?: number;
  /** Spans posted at once when this many have ended before the timer. */
  postAt?: number;
}

/**
 * A span processor that hands the sampled spans, as plain data, to a worker
 * thread (span-export-worker.ts) whose own span processors batch, encode and
 * export them: encoding a batch of spans took the request thread several
 * milliseconds, in the middle of whatever turn was running (docs/benchmarks.md).
 * Spans are posted in small batches (every `postEveryMs`, or at `postAt`
 * spans). A worker that fails or exits is logged (diag) and its spans are
 * dropped: tracing never fails the service.
 */
export class WorkerExportSpanProcessor implements SpanProcessor {
  private readonly batch = new BatchBuilder();
  private readonly postEveryMs: number;
  private readonly postAt: number;
  private timer: NodeJS.Timeout | undefined;
  /** Posts in order (a batch's resources may have to settle first). */
  private posting: Promise<void> = Promise.resolve();
  private readonly waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextRequest = 1;
  private alive = true;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly worker: Worker,
    options: WorkerExportOptions = {},
  ) {
    this.postEveryMs = options.postEveryMs ?? 100;
    this.postAt = options.postAt ?? 256;
    // The worker alone never keeps the service running; shutdown() flushes it.
    worker.unref();
    worker.on('message', (message: FromExportWorker) => {
      const request = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error) request?.reject(new Error(message.error));
      else request?.resolve();
    });
    worker.on('error', (error) => diag.error('span export worker failed', error));
    worker.on('exit', (code) => {
      this.alive = false;
      if (code !== 0 && !this.stopping) diag.error(`span export worker exited (${code}); spans are no longer exported`);
      for (const request of this.waiting.values()) request.reject(new Error('the span export worker exited'));
      this.waiting.clear();
    });
  }

  /** The worker of span-export-worker.js, beside this module. */
  static start(options?: WorkerExportOptions): WorkerExportSpanProcessor {
    return new WorkerExportSpanProcessor(new Worker(new URL('./span-export-worker.js', import.meta.url)), options);
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (!this.alive || this.stopping || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.batch.add(span);
    if (this.batch.size >= this.postAt) this.post();
    else this.timer ??= setTimeout(() => this.post(), this.postEveryMs).unref();
  }

  async forceFlush(): Promise<void> {
    this.post();
    await this.posting;
    await this.ask('flush');
  }

  shutdown(): Promise<void> {
    this.stopping ??= this.forceFlush()
      .then(() => this.ask('shutdown'))
      .catch((error: unknown) => diag.error('span export worker did not shut down cleanly', error))
      .finally(() => this.worker.terminate())
      .then(() => undefined);
    return this.stopping;
  }

  private post(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.batch.size === 0) return;
    const taken = this.batch.take();
    this.posting = this.posting
      .then(() => taken)
      .then((batch) => {
        if (this.alive) this.worker.postMessage({ kind: 'spans', batch } satisfies ToExportWorker);
      })
      .catch((error: unknown) => diag.error('spans could not be posted to the export worker', error));
  }

  private ask(kind: 'flush' | 'shutdown'): Promise<void> {
    if (!this.alive) return Promise.resolve();
    const id = this.nextRequest++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ kind, id } satisfies ToExportWorker);
    });
  }
}
