import { makeFlateBombPdf, makeNestedPdf, makePdf } from '../support/make-pdf.js';
import { DocumentTooLargeError, ParseLimits, parseDocument, UnreadableDocumentError } from '../../src/knowledge/ingest/document-parser.js';

const LIMITS: ParseLimits = { timeoutMs: 60_000, memoryMb: 256, maxExtractedBytes: 1024 * 1024, maxPages: 100 };

/**
 * parseDocument on PDFs, which it parses in a worker thread of its own (one per document, started with its own
 * module loader): seconds each, so they live in the integration tier rather than the unit tier
 * (src/knowledge/document-parser.spec.ts has the text formats). The time and memory limits use flate bombs that
 * inflate to hundreds of MB.
 */
describe('parseDocument: limits (a PDF is parsed in a worker thread)', () => {
  it('reads a PDF page by page, keeping page numbers', async () => {
    const parsed = await parseDocument('two.pdf', makePdf(['First page text', 'Second page text']), LIMITS);
    expect(parsed).toMatchObject({ contentType: 'application/pdf', pageCount: 2 });
    expect(parsed.pages.map((p) => [p.page, p.text.trim()])).toEqual([
      [1, 'First page text'],
      [2, 'Second page text'],
    ]);
  });

  it('refuses a PDF with more pages than maxPages before reading its text', async () => {
    const pdf = makePdf(Array.from({ length: 101 }, (_, i) => `page ${i + 1}`));
    await expect(parseDocument('many.pdf', pdf, LIMITS)).rejects.toThrow(
      new DocumentTooLargeError('many.pdf is too large: it has 101 pages, more than the 100 a document may have'),
    );
    await expect(parseDocument('many.pdf', pdf, { ...LIMITS, maxPages: 101 })).resolves.toMatchObject({ pageCount: 101 });
  });

  it('stops extracting at maxExtractedBytes of text, whatever the pages', async () => {
    const pdf = makePdf(Array.from({ length: 10 }, () => 'x'.repeat(100)));
    await expect(parseDocument('wordy.pdf', pdf, { ...LIMITS, maxExtractedBytes: 500 })).rejects.toThrow(
      new DocumentTooLargeError('wordy.pdf is too large: it holds more than 500 bytes of text'),
    );
    await expect(parseDocument('wordy.pdf', pdf, { ...LIMITS, maxExtractedBytes: 2000 })).resolves.toMatchObject({ pageCount: 10 });
  });

  it('reports a PDF nested deeper than the parser can follow as unreadable', async () => {
    await expect(parseDocument('nested.pdf', makeNestedPdf(100_000), LIMITS)).rejects.toThrow(
      new UnreadableDocumentError('nested.pdf could not be read as a PDF (damaged, encrypted or not a PDF)'),
    );
  });

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
