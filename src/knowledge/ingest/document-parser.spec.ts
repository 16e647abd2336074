import { DocumentTooLargeError, ParseLimits, parseDocument, storablePages, UnreadableDocumentError } from './document-parser.js';

// PDFs are parsed in a worker thread: those tests are in test/integration/document-parser-pdf.int-spec.ts.

const LIMITS: ParseLimits = { timeoutMs: 60_000, memoryMb: 256, maxExtractedBytes: 1024 * 1024, maxPages: 100 };

describe('parseDocument: text PostgreSQL can store', () => {
  it('refuses uploaded text with a NUL character, naming the file and the problem', async () => {
    for (const name of ['notes.txt', 'notes.md']) {
      const result = parseDocument(name, Buffer.from('fine\u0000 text', 'utf8'), LIMITS);
      await expect(result).rejects.toThrow(UnreadableDocumentError);
      await expect(parseDocument(name, Buffer.from('fine\u0000 text', 'utf8'), LIMITS)).rejects.toThrow(`${name} contains a NUL character (U+0000)`);
    }
  });

  it('refuses text that is not UTF-8 (a UTF-8-encoded surrogate included)', async () => {
    await expect(parseDocument('a.txt', Buffer.from([0x61, 0xed, 0xa0, 0x80]), LIMITS)).rejects.toThrow('a.txt is not valid UTF-8 text');
  });

  it('keeps other text as it is', async () => {
    const parsed = await parseDocument('a.md', Buffer.from('\ufeff# Title\n退货 \u0001 policy', 'utf8'), LIMITS);
    expect(parsed.pages).toEqual([{ page: null, text: '# Title\n退货 \u0001 policy' }]);
  });

  it('makes extracted PDF text storable instead of failing: no NUL, no lone surrogate, no carriage return', () => {
    expect(
      storablePages([
        { page: 1, text: 'a\u0000b\r\nc\ud800d\udc00e 😀' },
        { page: 2, text: 'clean' },
      ]),
    ).toEqual([
      { page: 1, text: 'ab\nc\ufffdd\ufffde 😀' },
      { page: 2, text: 'clean' },
    ]);
  });
});

describe('parseDocument: limits on uploaded text', () => {
  it('refuses uploaded text over maxExtractedBytes', async () => {
    await expect(parseDocument('big.txt', Buffer.alloc(2001, 'a'), { ...LIMITS, maxExtractedBytes: 2000 })).rejects.toThrow(DocumentTooLargeError);
    await expect(parseDocument('big.txt', Buffer.alloc(2000, 'a'), { ...LIMITS, maxExtractedBytes: 2000 })).resolves.toBeDefined();
  });
});
