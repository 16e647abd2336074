import { makeFlateBombPdf } from '../support/make-pdf.js';
import { DocumentTooLargeError, ParseLimits, parseDocument } from '../../src/knowledge/document-parser.js';

const LIMITS: ParseLimits = { timeoutMs: 60_000, memoryMb: 256, maxExtractedBytes: 1024 * 1024, maxPages: 100 };

/**
 * The parse sandbox's time and memory limits, on flate bombs that inflate to hundreds of MB in a worker thread.
 * They take seconds of CPU each, so they live here rather than in the unit tier (src/knowledge/document-parser.spec.ts
 * has the rest of parseDocument's limits).
 */
describe('parseDocument: time and memory limits of the worker that parses a PDF', () => {
  it('stops the worker at timeoutMs', async () => {
    // Big enough that no machine parses it in 3 s; no memory limit that could stop it first.
    const bomb = await makeFlateBombPdf(400 * 1024 * 1024);
    await expect(parseDocument('slow.pdf', bomb, { ...LIMITS, memoryMb: 8192, maxExtractedBytes: 1024 ** 3, timeoutMs: 3000 })).rejects.toThrow(
      new DocumentTooLargeError('slow.pdf is too large: its parse took longer than 3000 ms'),
    );
  });

  it('stops the worker when what it holds passes memoryMb', async () => {
    // Text without a cap on it: what the worker holds (the inflated stream, the extracted text) grows past 32 MB long
    // before the 300 MB stream ends. (An array of numbers is no sure witness: pdf.js may give such a page up unread.)
    const bomb = await makeFlateBombPdf(300 * 1024 * 1024);
    await expect(parseDocument('heavy.pdf', bomb, { ...LIMITS, memoryMb: 32, maxExtractedBytes: 1024 ** 3, timeoutMs: 100_000 })).rejects.toThrow(
      new DocumentTooLargeError('heavy.pdf is too large: its parse needed more than 32 MB'),
    );
  });

  it('stops the worker when the buffers it inflates, outside its heap, pass memoryMb', async () => {
    // 1 GB of white space: no text for the text cap, nothing on the heap for the heap limit, only inflated bytes.
    const bomb = await makeFlateBombPdf(1024 * 1024 * 1024, { repeat: ' ' });
    await expect(parseDocument('blank.pdf', bomb, { ...LIMITS, memoryMb: 64, timeoutMs: 100_000 })).rejects.toThrow(
      new DocumentTooLargeError('blank.pdf is too large: its parse needed more than 64 MB'),
    );
  });

});
