import { ExtractionBudget, ExtractionLimitError, UnreadableContentError } from '../extraction-budget.js';
import { csvDelimiter, extractCsvTable } from './csv-table.js';
import { cellText, columnLetters, tableRows } from './table-rows.js';

const budget = (maxExtractedBytes = 1024 * 1024) => new ExtractionBudget({ maxPages: 100, maxExtractedBytes });
const letters = (column: number) => `Column ${columnLetters(column)}`;

describe('tableRows: each data row as text naming its columns', () => {
  it("gives each row with its header row's names and its own row number", () => {
    const rows = tableRows([[null, null], ['Product', 'Price', null], ['Aurora X1', '199 EUR', 'spare'], [], ['Borealis', 42, null]], budget(), letters);
    expect(rows).toEqual([
      { row: 3, text: 'Product: Aurora X1; Price: 199 EUR; Column C: spare' },
      { row: 5, text: 'Product: Borealis; Price: 42' },
    ]);
  });

  it('writes values on one line: dates as ISO dates, booleans and numbers as they are', () => {
    expect(cellText(new Date(Date.UTC(2024, 0, 2)))).toBe('2024-01-02');
    expect(cellText(new Date(Date.UTC(2024, 0, 2, 13, 5, 9)))).toBe('2024-01-02 13:05:09');
    expect(cellText(new Date(Number.NaN))).toBe('');
    expect(cellText(true)).toBe('true');
    expect(cellText(0.5)).toBe('0.5');
    expect(cellText('  two\nlines  ')).toBe('two lines');
    expect(columnLetters(0)).toBe('A');
    expect(columnLetters(25)).toBe('Z');
    expect(columnLetters(26)).toBe('AA');
    expect(columnLetters(701)).toBe('ZZ');
    expect(columnLetters(702)).toBe('AAA');
  });

  it('gives a table of one row that row, and an empty table nothing', () => {
    expect(tableRows([['Only', 'a', 'header']], budget(), letters)).toEqual([{ row: 1, text: 'Only; a; header' }]);
    expect(tableRows([[null], ['']], budget(), letters)).toEqual([]);
  });

  it('counts each row against the budget', () => {
    const rows = [['Name'], ...Array.from({ length: 100 }, (_, i) => [`value ${i}`])];
    expect(() => tableRows(rows, budget(500), letters)).toThrow(ExtractionLimitError);
  });
});

describe('extractCsvTable', () => {
  it('finds the delimiter from the header line, outside quotes', () => {
    expect(csvDelimiter('a,b,c\n1;2;3')).toBe(',');
    expect(csvDelimiter('Produkt;Preis;"a,b,c"\n')).toBe(';');
    expect(csvDelimiter('a\tb\n')).toBe('\t');
    expect(csvDelimiter('single\n')).toBe(',');
  });

  it('reads a CSV file as rows numbered as a spreadsheet shows them, quoted fields and blank lines included', async () => {
    const csv = '\ufeffProduct,Price,Notes\r\n"Aurora, X1",199 EUR,"two\nlines"\r\n\r\nBorealis,42,\r\n';
    const extracted = await extractCsvTable(Buffer.from(csv, 'utf8'), budget());
    expect(extracted).toEqual({
      pageCount: null,
      pages: [],
      tables: [
        {
          sheet: null,
          rows: [
            { row: 2, text: 'Product: Aurora, X1; Price: 199 EUR; Notes: two lines' },
            { row: 4, text: 'Product: Borealis; Price: 42' },
          ],
        },
      ],
    });
  });

  it('refuses a CSV file whose quote never closes', async () => {
    await expect(extractCsvTable(Buffer.from('a,b\n"open,2\n'), budget())).rejects.toThrow(UnreadableContentError);
  });
});
