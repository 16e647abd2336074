import { Worker, WorkerOptions } from 'node:worker_threads';
import type { ExtractionLimits } from './extraction-budget.js';
import type { ParseOutcome, ParseRequest, SandboxedFormat } from './parse-worker.js';

export type { ParseOutcome, SandboxedFormat };

export interface SandboxLimits extends ExtractionLimits {
  /** The worker is stopped past it. */
  timeoutMs: number;
  /** The worker's V8 heap (old generation). */
  memoryMb: number;
}

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
    const settle = (outcome: ParseOutcome) => {
      clearTimeout(timer);
      worker.removeAllListeners();
      worker.on('error', () => undefined);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ ok: false, reason: 'too_large', message: `its parse took longer than ${limits.timeoutMs} ms` }),
      limits.timeoutMs,
    );
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
