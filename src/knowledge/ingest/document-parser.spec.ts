import { checkDocument, DocumentTooLargeError, ParseLimits, parseDocument, storablePages, UnreadableDocumentError, UnsupportedDocumentError } from './document-parser.js';

// Every type but .txt and .md is parsed in a worker thread: those tests are in test/integration/document-parser-*.int-spec.ts.

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
    expect(parsed.pages).toEqual([{ page: null, text: '# Title\n退货 \u0001 policy', headings: true }]);
    expect((await parseDocument('a.txt', Buffer.from('# not a heading', 'utf8'), LIMITS)).pages).toEqual([{ page: null, text: '# not a heading' }]);
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

describe('checkDocument: what an upload is refused for before it is queued', () => {
  const zip = Buffer.from('PK\u0003\u0004rest of an archive', 'latin1');

  it('accepts the known types by extension, naming them all when it refuses another', () => {
    for (const name of ['a.txt', 'a.md', 'a.csv', 'a.html', 'a.htm', 'A.HTML']) expect(() => checkDocument(name, Buffer.from('Product,Price\nAurora,1'))).not.toThrow();
    for (const name of ['a.docx', 'a.xlsx', 'B.DOCX']) expect(() => checkDocument(name, zip)).not.toThrow();
    expect(() => checkDocument('a.pdf', Buffer.from('%PDF-1.7'))).not.toThrow();
    expect(() => checkDocument('slides.pptx', zip)).toThrow(
      new UnsupportedDocumentError('slides.pptx: only .txt, .md, .pdf, .docx, .xlsx, .csv, .html and .htm files are accepted'),
    );
  });

  it('refuses macro-enabled Office files by their extension, whatever they hold', () => {
    for (const name of ['m.docm', 'm.xlsm', 'm.pptm', 'M.XLSM', 'm.dotm']) expect(() => checkDocument(name, zip)).toThrow(UnsupportedDocumentError);
    expect(() => checkDocument('budget.xlsm', zip)).toThrow('budget.xlsm is a macro-enabled Office file: those are refused; save it as .xlsx');
  });

  it('refuses an Office file that is not a zip archive, saying when it is encrypted', () => {
    const compoundFile = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);
    expect(() => checkDocument('secret.docx', compoundFile)).toThrow(
      new UnreadableDocumentError('secret.docx is encrypted (password-protected) or in the old binary Office format: save it again without a password, in the current format'),
    );
    expect(() => checkDocument('table.xlsx', Buffer.from('Product,Price'))).toThrow(new UnreadableDocumentError('table.xlsx is not an Excel workbook (it is not a zip archive)'));
    expect(() => checkDocument('empty.docx', Buffer.alloc(0))).toThrow(UnreadableDocumentError);
  });

  it('refuses CSV and HTML that are not in their encoding, or empty; NUL in them is left to the parse to remove', () => {
    expect(() => checkDocument('latin.csv', Buffer.from([0x61, 0x2c, 0xe9, 0x0a]))).toThrow(
      new UnreadableDocumentError('latin.csv could not be read as a CSV file: its text is not valid UTF-8'),
    );
    expect(() => checkDocument('blank.html', Buffer.from('  \n'))).toThrow(
      new UnreadableDocumentError('blank.html is empty (it holds no visible text, only white space or invisible characters)'),
    );
    expect(() => checkDocument('nul.csv', Buffer.from('a,b\n\u0000,1'))).not.toThrow();
  });
});
