import { CodedError } from '../../common/coded-error.js';
import path from 'node:path';
import { hasVisibleCharacter, storableTextProblem, toStorableText } from '../../common/storable-text.js';
import { acceptedExtensions, DOCUMENT_TYPES, DocumentType, MACRO_ENABLED_EXTENSIONS, zipMagicProblem } from './document-types.js';
import { ExtractedText, TableSection, TextSection, UnreadableContentError } from './extraction-budget.js';
import { extractInSandbox, SandboxLimits } from './parse-sandbox.js';
import { decodeCsv, decodeHtml } from './parsers/text-decoding.js';

export class UnsupportedDocumentError extends CodedError {
  readonly code = 'unsupported_document';
}
export class UnreadableDocumentError extends CodedError {
  readonly code = 'unreadable_document';
}
/** Over a parse limit (text, pages, chunks, the parse's time or memory): it would fail the same way again. */
export class DocumentTooLargeError extends CodedError {
  readonly code = 'document_too_large';
}

/** What parsing one document may take: KNOWLEDGE_PARSE_TIMEOUT_MS, KNOWLEDGE_PARSE_MEMORY_MB, KNOWLEDGE_MAX_EXTRACTED_BYTES, KNOWLEDGE_MAX_PAGES. */
export type ParseLimits = SandboxLimits;

export interface ParsedDocument {
  contentType: string;
  pageCount: number | null;
  /** The text, page by page (one page without a number for formats without pages). */
  pages: TextSection[];
  /** The rows of spreadsheets' sheets and CSV files: each becomes a chunk of its own. */
  tables: TableSection[];
}

function documentType(filename: string): DocumentType {
  const extension = path.extname(filename).toLowerCase();
  if (MACRO_ENABLED_EXTENSIONS.has(extension)) {
    throw new UnsupportedDocumentError(`${filename} is a macro-enabled Office file: those are refused; save it as ${extension.slice(0, -1)}x`);
  }
  const type = DOCUMENT_TYPES[extension];
  if (!type) throw new UnsupportedDocumentError(`${filename}: only ${acceptedExtensions()} files are accepted`);
  return type;
}

/**
 * The checks of `parseDocument` that need no parsing: the type by extension
 * (UnsupportedDocumentError, macro-enabled Office files included), text
 * that is not storable UTF-8, a PDF without its header, an Office file that
 * is no zip archive (an encrypted one is not), a CSV or HTML file not in its
 * encoding (UnreadableDocumentError). An upload is checked so before it is
 * queued, so these answer at once; a file that cannot be parsed fails its
 * ingest job.
 */
export function checkDocument(filename: string, data: Buffer): void {
  const type = documentType(filename);
  if (!type.sandbox) {
    decodeText(filename, data);
    return;
  }
  if (type.magic === 'pdf' && data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new UnreadableDocumentError(`${filename} is not a PDF file`);
  if (type.magic === 'zip') {
    const problem = zipMagicProblem(data, type);
    if (problem) throw new UnreadableDocumentError(`${filename} ${problem}`);
  }
  if (type.sandbox === 'csv' || type.sandbox === 'html') {
    let text: string;
    try {
      text = type.sandbox === 'csv' ? decodeCsv(data) : decodeHtml(data);
    } catch (error) {
      if (!(error instanceof UnreadableContentError)) throw error;
      throw new UnreadableDocumentError(`${filename} could not be read as ${type.label}: ${error.message}`);
    }
    if (!hasVisibleCharacter(text)) throw new UnreadableDocumentError(emptyDocumentMessage(filename));
  }
}

/** A document with nothing a reader would see: no bytes, or only white space and invisible characters (zero-width, direction marks). */
function emptyDocumentMessage(filename: string): string {
  return `${filename} is empty (it holds no visible text, only white space or invisible characters)`;
}

function decodeText(filename: string, data: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data).replace(/^\uFEFF/, '');
  } catch {
    throw new UnreadableDocumentError(`${filename} is not valid UTF-8 text`);
  }
  const problem = storableTextProblem(text);
  if (problem) throw new UnreadableDocumentError(`${filename} ${problem}`);
  if (!hasVisibleCharacter(text)) throw new UnreadableDocumentError(emptyDocumentMessage(filename));
  return text;
}

/**
 * Reads .txt and .md as UTF-8 (one page, no number); every other type is
 * parsed in a worker thread under `limits` (see extractInSandbox): .pdf page
 * by page, keeping page numbers; .docx and .html as markdown-like text with
 * `#` headings; .xlsx and .csv as tables whose rows become chunks of their
 * own. A document over one of the limits throws DocumentTooLargeError.
 * Uploaded text PostgreSQL cannot store (invalid UTF-8, NUL) is refused;
 * text extracted from the other types, which the uploader does not control,
 * is made storable (NUL removed, lone surrogates replaced).
 */
export async function parseDocument(filename: string, data: Buffer, limits: ParseLimits): Promise<ParsedDocument> {
  const type = documentType(filename);
  if (!type.sandbox) {
    if (data.length > limits.maxExtractedBytes) {
      throw new DocumentTooLargeError(`${filename} is too large: it holds more than ${limits.maxExtractedBytes} bytes of text`);
    }
    const text = decodeText(filename, data);
    return { contentType: type.contentType, pageCount: null, pages: [{ page: null, text, ...(type.headings ? { headings: true } : {}) }], tables: [] };
  }
  checkDocument(filename, data);
  const outcome = await extractInSandbox(type.sandbox, data, limits);
  if (!outcome.ok && outcome.reason === 'too_large') throw new DocumentTooLargeError(`${filename} is too large: ${outcome.message}`);
  if (!outcome.ok) {
    // The parser's own words may quote the file's internals; the client is told what it can act on.
    const why = outcome.reason === 'unreadable' && outcome.detail ? `: ${outcome.detail}` : ` (damaged, encrypted or not ${type.label})`;
    throw new UnreadableDocumentError(`${filename} could not be read as ${type.label}${why}`);
  }
  const { pages, tables } = storableText(outcome.text);
  if (!pages.some((p) => hasVisibleCharacter(p.text)) && !tables.some((table) => table.rows.some((row) => hasVisibleCharacter(row.text)))) {
    const hint = type.sandbox === 'pdf' ? ' (scanned images are not supported)' : '';
    throw new UnreadableDocumentError(`${filename} has no extractable text${hint}`);
  }
  return { contentType: type.contentType, pageCount: outcome.text.pageCount, pages, tables };
}

/** Extracted page texts as they are stored: without carriage returns, NUL characters or lone surrogates. */
export function storablePages(pages: TextSection[]): TextSection[] {
  return pages.map((page) => ({ ...page, text: toStorableText(page.text.replace(/\r/g, '')) }));
}

/** storablePages, and the same of tables' rows and sheet names. */
function storableText(text: ExtractedText): { pages: TextSection[]; tables: TableSection[] } {
  return {
    pages: storablePages(text.pages),
    tables: (text.tables ?? []).map((table) => ({
      sheet: table.sheet === null ? null : toStorableText(table.sheet),
      rows: table.rows.map((row) => ({ row: row.row, text: toStorableText(row.text.replace(/\r/g, '')) })),
    })),
  };
}
