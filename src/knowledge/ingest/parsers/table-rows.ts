import type { ExtractionBudget, TableRow } from '../extraction-budget.js';

/** A cell as spreadsheet and CSV readers give it. */
export type CellValue = string | number | boolean | Date | null | undefined;

/** The text of a cell on one line: white space collapsed, dates as ISO dates (with the time when it has one). */
export function cellText(value: CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return '';
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
  }
  return String(value).replace(/\s+/g, ' ').trim();
}

/** `A`, `B`, … `Z`, `AA`: a spreadsheet's name of the column at `index` (0-based). */
export function columnLetters(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/**
 * The data rows of a table as text that names each value's column, so a
 * row is found by a question about one of its values (`Product: Aurora X1;
 * Price: 199 EUR`). `rows[i]` is the table's row `i + 1`; the first row with
 * a value is the header, whose cells name the columns (a column without a
 * header is named by `unnamedColumn`). Empty cells and rows are left out; a
 * table that is only its header row gives that row, without names. Each
 * row's text is counted against `budget`.
 */
export function tableRows(rows: CellValue[][], budget: ExtractionBudget, unnamedColumn: (index: number) => string): TableRow[] {
  const texts = (row: CellValue[]) => row.map(cellText);
  const headerIndex = rows.findIndex((row) => row.some((cell) => cellText(cell) !== ''));
  if (headerIndex < 0) return [];
  const header = texts(rows[headerIndex]);
  const out: TableRow[] = [];
  for (let index = headerIndex + 1; index < rows.length; index += 1) {
    const values = texts(rows[index]);
    const named = values.flatMap((value, column) => (value ? [`${header[column] || unnamedColumn(column)}: ${value}`] : []));
    if (named.length === 0) continue;
    const text = named.join('; ');
    budget.take(text);
    out.push({ row: index + 1, text });
  }
  if (out.length === 0) {
    const text = header.filter(Boolean).join('; ');
    budget.take(text);
    out.push({ row: headerIndex + 1, text });
  }
  return out;
}
