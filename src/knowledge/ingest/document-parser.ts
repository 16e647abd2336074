import { CodedError } from '../../common/coded-error.js';
import path from 'node:path';
import { storableTextProblem, toStorableText } from '../../common/storable-text.js';
import { extractInSandbox, SandboxLimits } from './parse-sandbox.js';

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
  pages: Array<{ page: number | null; text: string }>;
}

const TEXT_TYPES: Record<string, string> = { '.txt': 'text/plain', '.md': 'text/markdown' };

/**
 * The checks of `parseDocument` that need no parsing: the type by extension
 * (UnsupportedDocumentError), text that is not storable UTF-8 and a PDF
 * without its header (UnreadableDocumentError). An upload is checked so
 * before it is queued, so these answer at once; a PDF that cannot be parsed
 * fails its ingest job.
 */
export function checkDocument(filename: string, data: Buffer): void {
  const extension = path.extname(filename).toLowerCase();
  if (TEXT_TYPES[extension]) {
    decodeText(filename, data);
    return;
  }
  if (extension !== '.pdf') throw new UnsupportedDocumentError(`${filename}: only .txt, .md and .pdf files are accepted`);
  if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new UnreadableDocumentError(`${filename} is not a PDF file`);
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
  if (!text.trim()) throw new UnreadableDocumentError(`${filename} is empty`);
  return text;
}

/**
 * Reads .txt and .md as UTF-8 (one page, no number) and .pdf page by page,
 * keeping page numbers. Uploaded text PostgreSQL cannot store (invalid
 * UTF-8, NUL) is refused; text extracted from a PDF, which the uploader does
 * not control, is made storable (NUL removed, lone surrogates replaced).
 * A PDF is parsed in a worker thread under `limits` (see extractInSandbox);
 * a document over one of them throws DocumentTooLargeError.
 */
export async function parseDocument(filename: string, data: Buffer, limits: ParseLimits): Promise<ParsedDocument> {
  const extension = path.extname(filename).toLowerCase();
  if (TEXT_TYPES[extension]) {
    if (data.length > limits.maxExtractedBytes) {
      throw new DocumentTooLargeError(`${filename} is too large: it holds more than ${limits.maxExtractedBytes} bytes of text`);
    }
    const text = decodeText(filename, data);
    return { contentType: TEXT_TYPES[extension], pageCount: null, pages: [{ page: null, text }] };
  }
  if (extension === '.pdf') {
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new UnreadableDocumentError(`${filename} is not a PDF file`);
    const outcome = await extractInSandbox('pdf', data, limits);
    if (!outcome.ok && outcome.reason === 'too_large') throw new DocumentTooLargeError(`${filename} is too large: ${outcome.message}`);
    // The parser's own words may quote the file's internals; the client is told what it can act on.
    if (!outcome.ok) throw new UnreadableDocumentError(`${filename} could not be read as a PDF (damaged, encrypted or not a PDF)`);
    const pages = storablePages(outcome.text.pages);
    if (!pages.some((p) => p.text.trim())) {
      throw new UnreadableDocumentError(`${filename} has no extractable text (scanned images are not supported)`);
    }
    return { contentType: 'application/pdf', pageCount: outcome.text.pageCount, pages };
  }
  throw new UnsupportedDocumentError(`${filename}: only .txt, .md and .pdf files are accepted`);
}

/** Extracted page texts as they are stored: without carriage returns, NUL characters or lone surrogates. */
export function storablePages(pages: ParsedDocument['pages']): ParsedDocument['pages'] {
  return pages.map(({ page, text }) => ({ page, text: toStorableText(text.replace(/\r/g, '')) }));
}
