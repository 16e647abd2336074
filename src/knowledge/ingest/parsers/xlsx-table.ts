import readXlsxFile from 'read-excel-file/universal';
import { ExtractedText, ExtractionBudget, UnreadableContentError } from '../extraction-budget.js';
import { pathSegments, readArchiveParts, storedArchive } from './office-archive.js';
import { CellValue, columnLetters, tableRows } from './table-rows.js';

/** Longest sheet name kept (characters): Excel allows 31; every row's location repeats it. */
export const MAX_SHEET_NAME = 100;

/** Folders of a workbook's archive that hold no cell values: drawings, charts, pivot caches, images, macros' parts. */
const SKIPPED_FOLDERS = new Set([
  'drawings',
  'charts',
  'chartsheets',
  'media',
  'embeddings',
  'theme',
  'docprops',
  'customxml',
  'pivotcache',
  'pivottables',
  'externallinks',
  'printersettings',
  'ctrlprops',
  'activex',
  'richdata',
  'slicers',
  'slicercaches',
  'timelines',
  'persons',
  'threadedcomments',
  'webextensions',
]);

/** The parts read-excel-file reads: the workbook, its sheets, shared strings and styles, and the relationships between them. */
export function isWorkbookPart(name: string): boolean {
  const segments = pathSegments(name);
  const file = segments[segments.length - 1];
  if (!file.endsWith('.xml') && !file.endsWith('.rels')) return false;
  return !segments.some((segment) => SKIPPED_FOLDERS.has(segment)) && file !== 'calcchain.xml';
}

/**
 * An .xlsx workbook as one table per sheet (see tableRows; a row keeps the
 * number the spreadsheet shows; the sheet's name is cut to MAX_SHEET_NAME
 * characters). Its parts are inflated under the document's extraction limit
 * first (readArchiveParts), then read with read-excel-file.
 */
export async function extractXlsxTables(data: Uint8Array, budget: ExtractionBudget): Promise<ExtractedText> {
  const parts = await readArchiveParts(data, isWorkbookPart, budget.limits.maxExtractedBytes);
  if (!parts.has('xl/workbook.xml')) throw new UnreadableContentError('it has no workbook (xl/workbook.xml): it is not an .xlsx file');
  const archive = storedArchive(parts);
  const sheets = await readXlsxFile(archive.buffer.slice(archive.byteOffset, archive.byteOffset + archive.byteLength) as ArrayBuffer);
  const tables = sheets.map(({ sheet, data: rows }) => ({
    sheet: sheet.slice(0, MAX_SHEET_NAME),
    rows: tableRows(rows as CellValue[][], budget, (column) => `Column ${columnLetters(column)}`),
  }));
  return { pageCount: null, pages: [], tables };
}
