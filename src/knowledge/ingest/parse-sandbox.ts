import { Worker, WorkerOptions } from 'node:worker_threads';
import type { ExtractionLimits } from './extraction-budget.js';
import type { ParseOutcome, ParseRequest, SandboxedFormat } from './parse-worker.js';

export type { ParseOutcome, SandboxedFormat };

export interface SandboxLimits extends ExtractionLimits {
  /** The worker is stopped past it. */
  timeoutMs: number;
  /** The worker's memory: its V8 heap (old generation), and the buffers it allocates outside the heap (inflated streams). */
  memoryMb: number;
}

/** What a worker thread costs before it parses anything (its isolate, the parser's code): not counted against memoryMb. */
const WORKER_BASE_MB = 96;
/** How often the process's resident memory is read while a worker parses. */
const MEMORY_SAMPLE_MS = 25;
/** Workers parsing in this process now: the resident memory the watch allows grows with them. */
let parsing = 0;

const here = import.meta.url;
// Run from TypeScript source (the tests), the worker's module is compiled on load by ts-node's loader.
const fromSource = here.endsWith('.ts');
const WORKER_URL = new URL(fromSource ? './parse-worker.ts' : './parse-worker.js', here);
const SOURCE_OPTIONS: WorkerOptions = fromSource
  ? {
      execArgv: ['--loader', 'ts-node/esm', '--disable-warning=ExperimentalWarning'],
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' },
    }
  : {};

/**
 * Extracts a document's text in a worker thread of its own, off the event
 * loop, under a heap limit and a time limit; the worker is terminated when
 * it answers, runs out of time or memory, so whatever it held is freed. A
 * parse over a limit comes back as `too_large`, never as an exception.
 */
export function extractInSandbox(format: SandboxedFormat, data: Buffer, limits: SandboxLimits): Promise<ParseOutcome> {
  const request: ParseRequest = {
    format,
    data: new Uint8Array(data),
    limits: { maxPages: limits.maxPages, maxExtractedBytes: limits.maxExtractedBytes },
  };
  return new Promise<ParseOutcome>((resolve) => {
    const worker = new Worker(WORKER_URL, {
      ...SOURCE_OPTIONS,
      workerData: request,
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
    });
    parsing += 1;
    // The heap limit does not see buffers (pdf.js inflates a stream into one, doubling it as it grows): the process's
    // resident memory is watched too, and the worker stopped once it grew past what the parses under way may use.
    const allowedRss = process.memoryUsage.rss() + (limits.memoryMb + WORKER_BASE_MB) * 1024 * 1024 * parsing;
    const memoryWatch = setInterval(() => {
      if (process.memoryUsage.rss() > allowedRss) {
        settle({ ok: false, reason: 'too_large', message: `its parse needed more than ${limits.memoryMb} MB` });
      }
    }, MEMORY_SAMPLE_MS);
    let settled = false;
    const settle = (outcome: ParseOutcome) => {
      if (settled) return;
      settled = true;
      parsing -= 1;
      clearInterval(memoryWatch);
      clearTimeout(timer);
      worker.removeAllListeners();
      worker.on('error', () => undefined);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ ok: false, reason: 'too_large', message: `its parse took longer than ${limits.timeoutMs} ms` }), limits.timeoutMs);
    worker.once('message', (outcome: ParseOutcome) => settle(outcome));
    worker.once('error', (error: Error & { code?: string }) =>
      settle(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { ok: false, reason: 'too_large', message: `its parse needed more than ${limits.memoryMb} MB` }
          : { ok: false, reason: 'unreadable', message: error.name },
      ),
    );
    worker.once('exit', () => settle({ ok: false, reason: 'unreadable', message: 'the parser stopped' }));
  });
}
