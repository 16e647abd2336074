import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { DOCUMENT_TYPES } from '../src/knowledge/ingest/document-types.js';
import { IngestJob, isFinished } from '../src/knowledge/ingest/jobs/ingest-job.js';
import type { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';

export interface FolderIngestResult {
  lines: string[];
  failed: number;
}

/**
 * Submits every document of `folder` of a type the knowledge base accepts
 * (.txt, .md, .pdf, .docx, .xlsx, .csv, .html) as an ingest job (as an upload
 * does) and waits for them all, with a progress bar per file on `output`.
 */
export async function ingestFolderAsJobs(jobs: IngestJobs, folder: string, output: NodeJS.WritableStream & { isTTY?: boolean }): Promise<FolderIngestResult> {
  const root = path.resolve(folder);
  const files = (await readdir(root)).filter((file) => Object.hasOwn(DOCUMENT_TYPES, path.extname(file).toLowerCase())).sort();
  let failed = 0;
  const bars = new cliProgress.MultiBar(
    {
      format: ' {bar} {percentage}% | {file} | {stage}',
      hideCursor: true,
      clearOnComplete: false,
      stream: output,
      noTTYOutput: !output.isTTY,
      notTTYSchedule: 5000,
    },
    cliProgress.Presets.shades_classic,
  );
  const waits: Array<Promise<void>> = [];
  const lines: string[] = [];
  for (const file of files) {
    let submitted;
    try {
      submitted = await jobs.submit(file, await readFile(path.join(root, file)), 'cli:ingest');
    } catch (error) {
      failed += 1;
      lines.push(`refused  ${file}: ${(error as Error).message}`);
      continue;
    }
    if (!submitted.job) {
      lines.push(`skipped (already stored)  ${file}`);
      continue;
    }
    const bar = bars.create(100, 0, { file, stage: 'queued' });
    const id = submitted.job.id;
    waits.push(
      new Promise<void>((resolve) => {
        const stop = jobs.watch(id, (job: IngestJob) => {
          bar.update(Math.round(100 * overall(job)), { stage: describe(job) });
          if (!isFinished(job)) return;
          stop();
          if (job.status === 'failed') {
            failed += 1;
            lines.push(`failed  ${file}: ${job.error?.message ?? 'unknown error'}`);
          } else if (job.status === 'cancelled') {
            lines.push(`cancelled (deleted during its ingest)  ${file}`);
          } else {
            lines.push(`${job.duplicate ? 'skipped (already stored)' : 'added'}  ${file}`);
          }
          resolve();
        });
      }),
    );
  }
  await Promise.all(waits);
  bars.stop();
  return { lines, failed };
}

/** The job's share done over all stages: parsing 5 %, embedding 60 %, storing 30 %, indexing 5 %. */
function overall(job: IngestJob): number {
  if (job.status === 'completed') return 1;
  const weights: Record<string, [number, number]> = { parsing: [0, 0.05], embedding: [0.05, 0.6], storing: [0.65, 0.3], indexing: [0.95, 0.05] };
  const [start, share] = job.stage ? weights[job.stage] : [0, 0];
  const fraction = job.progress.total > 0 ? job.progress.done / job.progress.total : 0;
  return start + share * fraction;
}

function describe(job: IngestJob): string {
  if (job.status !== 'active') return job.status;
  return job.progress.total > 0 ? `${job.stage} ${job.progress.done}/${job.progress.total}` : (job.stage ?? 'active');
}
