import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ExtractedText, ExtractionBudget, ExtractionLimitError, ExtractionLimits, UnreadableContentError } from './extraction-budget.js';
import { extractCsvTable } from './parsers/csv-table.js';
import { extractDocxText } from './parsers/docx-text.js';
import { extractHtmlText } from './parsers/html-text.js';
import { extractPdfText } from './parsers/pdf-text.js';
import { extractXlsxTables } from './parsers/xlsx-table.js';

/**
 * The body of the worker thread extractInSandbox starts for one document: it
 * extracts the text with the format's extractor and posts a ParseOutcome.
 * Every format but plain text and markdown is parsed here, so each runs
 * under the same time, memory and size limits.
 */
const EXTRACTORS = {
  pdf: extractPdfText,
  docx: extractDocxText,
  xlsx: extractXlsxTables,
  html: extractHtmlText,
  csv: extractCsvTable,
} satisfies Record<string, (data: Uint8Array, budget: ExtractionBudget) => Promise<ExtractedText>>;

export type SandboxedFormat = keyof typeof EXTRACTORS;

export interface ParseRequest {
  format: SandboxedFormat;
  data: Uint8Array;
  limits: ExtractionLimits;
}

/**
 * `too_large`: over a limit; `unreadable`: the extractor failed. The parser's own words are not passed on (they may
 * quote the file): `message` is the error's name, and `detail` what the extractor itself says of the file, if it did.
 */
export type ParseOutcome =
  { ok: true; text: ExtractedText } | { ok: false; reason: 'too_large'; message: string } | { ok: false; reason: 'unreadable'; message: string; detail?: string };

async function extract({ format, data, limits }: ParseRequest): Promise<ParseOutcome> {
  try {
    return { ok: true, text: await EXTRACTORS[format](data, new ExtractionBudget(limits)) };
  } catch (error) {
    if (error instanceof ExtractionLimitError) return { ok: false, reason: 'too_large', message: error.message };
    if (error instanceof UnreadableContentError) return { ok: false, reason: 'unreadable', message: error.name, detail: error.message };
    return { ok: false, reason: 'unreadable', message: error instanceof Error ? error.name : 'unknown error' };
  }
}

if (parentPort) {
  const port = parentPort;
  // The parse yields the CPU to the instance's requests. On Linux a nice value is per thread, so this lowers only
  // this worker's thread; elsewhere it would lower the whole process, and is left alone.
  if (process.platform === 'linux') os.setPriority(os.constants.priority.PRIORITY_LOW);
  void extract(workerData as ParseRequest).then((outcome) => port.postMessage(outcome));
}
