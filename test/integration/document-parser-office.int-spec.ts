import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { assembleZip, makeDocx, makeXlsx, partsOf, zipBomb } from '../support/make-office.js';
import { DocumentTooLargeError, ParseLimits, parseDocument, UnreadableDocumentError } from '../../src/knowledge/ingest/document-parser.js';

const LIMITS: ParseLimits = { timeoutMs: 60_000, memoryMb: 256, maxExtractedBytes: 1024 * 1024, maxPages: 100 };

/** `file` (a .docx or .xlsx) with the text of its part `name` rewritten by `edit`. */
function editPart(file: Uint8Array, name: string, edit: (xml: string) => string): Buffer {
  const files = unzipSync(file);
  files[name] = strToU8(edit(strFromU8(files[name])));
  return Buffer.from(zipSync(files));
}

/**
 * parseDocument on .docx, .xlsx, .csv and .html, which it parses in a worker thread of its own under the same
 * limits as PDFs (see document-parser-pdf.int-spec.ts): seconds each, so they live in the integration tier.
 */
describe('parseDocument: Office files, CSV and HTML in the parse sandbox', () => {
  it('reads a .docx as text with markdown headings, and an .xlsx and a .csv as tables of rows', async () => {
    const docx = await parseDocument('guide.docx', await makeDocx([{ heading: 1, text: 'Returns' }, 'Within 45 days.']), LIMITS);
    expect(docx).toEqual({
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      pageCount: null,
      pages: [{ page: null, text: '# Returns\n\nWithin 45 days.', headings: true, splitAtHeadings: true }],
      tables: [],
    });
    const xlsx = await parseDocument(
      'prices.xlsx',
      await makeXlsx([
        {
          name: 'Products',
          rows: [
            ['Product', 'Price'],
            ['Aurora X1', '199 EUR'],
          ],
        },
      ]),
      LIMITS,
    );
    expect(xlsx).toMatchObject({ pages: [], tables: [{ sheet: 'Products', rows: [{ row: 2, text: 'Product: Aurora X1; Price: 199 EUR' }] }] });
    const csv = await parseDocument('prices.csv', Buffer.from('Product;Price\nAurora X1;199 EUR\n'), LIMITS);
    expect(csv).toMatchObject({ contentType: 'text/csv', tables: [{ sheet: null, rows: [{ row: 2, text: 'Product: Aurora X1; Price: 199 EUR' }] }] });
    const html = await parseDocument('page.html', Buffer.from('<h2>Care</h2><script>x()</script><p>Dry gently.</p>'), LIMITS);
    expect(html.pages).toEqual([{ page: null, text: '## Care\n\nDry gently.', headings: true, splitAtHeadings: true }]);
  });

  it('makes hostile text extracted from them storable: no NUL, no lone surrogate', async () => {
    const docx = editPart(await makeDocx(['MARKER']), 'word/document.xml', (xml) => xml.replace('MARKER', 'a&#xD800;b\u0000c&#xDC00;&#xD83D;&#xDE00;d'));
    expect((await parseDocument('hostile.docx', docx, LIMITS)).pages[0].text).toBe('a\ufffdbc\ufffd😀d');
    const xlsx = editPart(await makeXlsx([{ name: 'S', rows: [['Name'], ['MARKER']] }]), 'xl/worksheets/sheet1.xml', (xml) =>
      xml.replace(/<c r="A2"[^>]*>.*?<\/c>/, '<c r="A2" t="inlineStr"><is><t>x&#xD800;y\u0000z</t></is></c>'),
    );
    expect((await parseDocument('hostile.xlsx', xlsx, LIMITS)).tables[0].rows).toEqual([{ row: 2, text: 'Name: x\ufffdyz' }]);
    const csv = await parseDocument('hostile.csv', Buffer.from('Name,Note\nNUL\u0000here,ok\n'), LIMITS);
    expect(csv.tables[0].rows).toEqual([{ row: 2, text: 'Name: NULhere; Note: ok' }]);
    const html = await parseDocument('hostile.html', Buffer.from('<p>NUL\u0000 here &#0; and &#xD800;</p>'), LIMITS);
    expect(html.pages[0].text).toBe('NUL here \ufffd and \ufffd');
  });

  it('fails a .docx and an .xlsx whose parts inflate past maxExtractedBytes, lying about their sizes or not', async () => {
    const limits = { ...LIMITS, maxExtractedBytes: 256 * 1024 };
    const honest = await zipBomb(await makeDocx(['x']), 'word/document.xml', 512 * 1024 * 1024);
    await expect(parseDocument('bomb.docx', honest, limits)).rejects.toThrow(new DocumentTooLargeError('bomb.docx is too large: its parts inflate to more than 262144 bytes'));
    const lying = await zipBomb(await makeXlsx([{ name: 'S', rows: [['a']] }]), 'xl/worksheets/sheet1.xml', 512 * 1024 * 1024, 2000);
    await expect(parseDocument('bomb.xlsx', lying, limits)).rejects.toThrow(new DocumentTooLargeError('bomb.xlsx is too large: its parts inflate to more than 262144 bytes'));
  });

  it('fails a workbook whose sheet makes the parser allocate without bound, by the sandbox memory or time limit', async () => {
    // A few hundred bytes claiming a cell in row 100 000 000: read-excel-file fills the rows before it.
    const xlsx = editPart(await makeXlsx([{ name: 'S', rows: [['a']] }]), 'xl/worksheets/sheet1.xml', (xml) =>
      xml.replace(/<sheetData>.*<\/sheetData>/s, '<sheetData><row r="100000000"><c r="A100000000" t="inlineStr"><is><t>x</t></is></c></row></sheetData>'),
    );
    await expect(parseDocument('sparse.xlsx', xlsx, { ...LIMITS, memoryMb: 64, timeoutMs: 20_000 })).rejects.toThrow(DocumentTooLargeError);
  });

  it('fails encrypted, damaged and mislabelled files as unreadable, saying why where it can', async () => {
    const parts = partsOf(await makeDocx(['secret']));
    const encrypted = assembleZip(parts.map((part) => (part.name === 'word/document.xml' ? { ...part, flags: 1 } : part)));
    await expect(parseDocument('locked.docx', encrypted, LIMITS)).rejects.toThrow(new UnreadableDocumentError('locked.docx could not be read as a Word document: it is encrypted'));
    const whole = assembleZip(parts);
    await expect(parseDocument('cut.docx', whole.subarray(0, whole.length - 40), LIMITS)).rejects.toThrow(
      new UnreadableDocumentError('cut.docx could not be read as a Word document: it is not a readable zip archive (damaged or truncated)'),
    );
    const workbook = await makeXlsx([{ name: 'S', rows: [['a']] }]);
    await expect(parseDocument('renamed.docx', workbook, LIMITS)).rejects.toThrow(UnreadableDocumentError);
    await expect(parseDocument('renamed.xlsx', whole, LIMITS)).rejects.toThrow(
      new UnreadableDocumentError('renamed.xlsx could not be read as an Excel workbook: it has no workbook (xl/workbook.xml): it is not an .xlsx file'),
    );
    const brokenXml = editPart(workbook, 'xl/workbook.xml', (xml) => xml.slice(0, xml.length / 2));
    await expect(parseDocument('broken.xlsx', brokenXml, LIMITS)).rejects.toThrow(UnreadableDocumentError);
    await expect(parseDocument('open.csv', Buffer.from('a,b\n"never closed,1\n'), LIMITS)).rejects.toThrow(
      new UnreadableDocumentError('open.csv could not be read as a CSV file: it is not valid CSV (a quoted field never closes, or a field is malformed)'),
    );
    await expect(parseDocument('scripts.html', Buffer.from('<script>only()</script>'), LIMITS)).rejects.toThrow(
      new UnreadableDocumentError('scripts.html has no extractable text'),
    );
  });
});
