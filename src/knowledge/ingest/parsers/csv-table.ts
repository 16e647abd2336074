import { parse } from 'csv-parse/sync';
import { ExtractedText, ExtractionBudget, UnreadableContentError } from '../extraction-budget.js';
import { tableRows } from './table-rows.js';
import { decodeCsv } from './text-decoding.js';

const DELIMITERS = [',', ';', '\t', '|'];

/** The delimiter the header line uses most, outside quotes: `,` by default (`;` as European spreadsheets save, tab, `|`). */
export function csvDelimiter(text: string): string {
  const counts = new Map(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of text.slice(0, 64 * 1024)) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

/**
 * A CSV file as the rows of one table (see tableRows): the first record is
 * the header, each later one a row; a row's number is its record's (blank
 * lines count, as a spreadsheet shows them).
 */
export async function extractCsvTable(data: Uint8Array, budget: ExtractionBudget): Promise<ExtractedText> {
  const text = decodeCsv(data);
  let records: string[][];
  try {
    records = parse(text, { delimiter: csvDelimiter(text), relax_column_count: true, relax_quotes: true, skip_empty_lines: false }) as string[][];
  } catch {
    throw new UnreadableContentError('it is not valid CSV (a quoted field never closes, or a field is malformed)');
  }
  const rows = tableRows(records, budget, (column) => `Column ${column + 1}`);
  return { pageCount: null, pages: [], tables: [{ sheet: null, rows }] };
}
