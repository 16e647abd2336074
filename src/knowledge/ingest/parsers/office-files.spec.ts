import { assembleZip, deflatedRepeat, makeDocx, makeXlsx, partsOf, zipBomb } from '../../../../test/support/make-office.js';
import { ExtractionBudget, ExtractionLimitError, UnreadableContentError } from '../extraction-budget.js';
import { extractDocxText, isWordPart } from './docx-text.js';
import { readArchiveParts } from './office-archive.js';
import { extractXlsxTables, isWorkbookPart } from './xlsx-table.js';

const budget = (maxExtractedBytes = 1024 * 1024) => new ExtractionBudget({ maxPages: 100, maxExtractedBytes });

describe('.docx and .xlsx, read by mammoth and read-excel-file from parts inflated under a bound', () => {
  it('reads a .docx with its headings as markdown headings', async () => {
    const docx = await makeDocx([
      { heading: 1, text: 'Returns policy' },
      'Aurora widgets may be returned within 45 days.',
      { heading: 2, text: 'Refunds' },
      'Refunds reach the card in 5 days.',
    ]);
    expect(await extractDocxText(docx, budget())).toEqual({
      pageCount: null,
      pages: [
        {
          page: null,
          headings: true,
          splitAtHeadings: true,
          text: '# Returns policy\n\nAurora widgets may be returned within 45 days.\n\n## Refunds\n\nRefunds reach the card in 5 days.',
        },
      ],
    });
  });

  it('reads every sheet of an .xlsx as rows that carry their sheet, row number and header names', async () => {
    const xlsx = await makeXlsx([
      {
        name: 'Products',
        rows: [
          ['Product', 'Price'],
          ['Aurora X1', '199 EUR'],
          [null, null],
          ['Borealis', 42],
        ],
      },
      { name: '价格', rows: [[null], ['型号', '上市'], ['星辰', new Date(Date.UTC(2024, 0, 2))]] },
    ]);
    expect(await extractXlsxTables(xlsx, budget())).toEqual({
      pageCount: null,
      pages: [],
      tables: [
        {
          sheet: 'Products',
          rows: [
            { row: 2, text: 'Product: Aurora X1; Price: 199 EUR' },
            { row: 4, text: 'Product: Borealis; Price: 42' },
          ],
        },
        { sheet: '价格', rows: [{ row: 3, text: '型号: 星辰; 上市: 2024-01-02' }] },
      ],
    });
  });

  it('reads only the parts that hold text: images, embedded files, themes and macros are never inflated', async () => {
    expect(['word/document.xml', 'word/_rels/document.xml.rels', '[Content_Types].xml', 'word/styles.xml'].every(isWordPart)).toBe(true);
    expect(['word/media/image1.png', 'word/vbaProject.bin', 'word/theme/theme1.xml', 'word/embeddings/x.xlsx', 'docProps/app.xml'].some(isWordPart)).toBe(false);
    expect(['xl/workbook.xml', 'xl/worksheets/sheet1.xml', 'xl/sharedStrings.xml', 'xl/_rels/workbook.xml.rels'].every(isWorkbookPart)).toBe(true);
    expect(['xl/media/a.png', 'xl/drawings/drawing1.xml', 'xl/vbaProject.bin', 'xl/pivotCache/pivotCacheRecords1.xml'].some(isWorkbookPart)).toBe(false);
    // 64 MB of image the document does not need, under a 64 KB limit: not inflated, not counted.
    const docx = await makeDocx(['Plain text.']);
    const image = await deflatedRepeat(64 * 1024 * 1024, '\u0000');
    const withImage = assembleZip([...partsOf(docx), { name: 'word/media/image1.png', ...image }]);
    expect((await extractDocxText(withImage, budget(64 * 1024))).pages[0].text).toBe('Plain text.');
  });
});

describe('hostile archives', () => {
  const LIMIT = 256 * 1024;

  it('refuses a zip bomb by its declared sizes before inflating anything', async () => {
    const docx = await zipBomb(await makeDocx(['x']), 'word/document.xml', 64 * 1024 * 1024);
    await expect(extractDocxText(docx, budget(LIMIT))).rejects.toThrow(new ExtractionLimitError(`its parts inflate to more than ${LIMIT} bytes`));
    const xlsx = await zipBomb(await makeXlsx([{ name: 'S', rows: [['a']] }]), 'xl/worksheets/sheet1.xml', 64 * 1024 * 1024);
    await expect(extractXlsxTables(xlsx, budget(LIMIT))).rejects.toThrow(ExtractionLimitError);
  });

  it('stops inflating a zip bomb that lies about its sizes once it passes the limit', async () => {
    const started = performance.now();
    const docx = await zipBomb(await makeDocx(['x']), 'word/document.xml', 128 * 1024 * 1024, 1000);
    const built = performance.now();
    await expect(extractDocxText(docx, budget(LIMIT))).rejects.toThrow(new ExtractionLimitError(`its parts inflate to more than ${LIMIT} bytes`));
    // Inflating all 128 MB would take about as long as deflating it did.
    expect(performance.now() - built).toBeLessThan(Math.max(1000, built - started));
  });

  it('refuses a part that inflates to other than its declared size, within the limit, as damaged', async () => {
    const docx = await zipBomb(await makeDocx(['x']), 'word/document.xml', 10_000, 1000);
    await expect(extractDocxText(docx, budget(LIMIT))).rejects.toThrow(new UnreadableContentError('it is damaged: a part does not inflate to the size its archive says'));
  });

  it('refuses encrypted parts, truncated archives and archives that are not Office files', async () => {
    const parts = partsOf(await makeDocx(['secret']));
    const encrypted = assembleZip(parts.map((part) => (part.name === 'word/document.xml' ? { ...part, flags: 1 } : part)));
    await expect(extractDocxText(encrypted, budget())).rejects.toThrow(new UnreadableContentError('it is encrypted'));
    const whole = assembleZip(parts);
    await expect(extractDocxText(whole.subarray(0, whole.length - 30), budget())).rejects.toThrow(UnreadableContentError);
    await expect(extractDocxText(Buffer.from('PK\u0003\u0004 not really a zip'), budget())).rejects.toThrow(UnreadableContentError);
    const xlsxAsDocx = await makeXlsx([{ name: 'S', rows: [['a']] }]);
    await expect(extractDocxText(xlsxAsDocx, budget())).rejects.toThrow();
    await expect(extractXlsxTables(whole, budget())).rejects.toThrow(new UnreadableContentError('it has no workbook (xl/workbook.xml): it is not an .xlsx file'));
  });

  it('refuses an archive listing the same part twice', async () => {
    const parts = partsOf(await makeDocx(['x']));
    const document = parts.find((part) => part.name === 'word/document.xml')!;
    await expect(readArchiveParts(assembleZip([...parts, document]), isWordPart, LIMIT)).rejects.toThrow(
      new UnreadableContentError('it is damaged: its archive lists a part twice'),
    );
  });
});
