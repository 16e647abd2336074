import { CodedError } from '../common/coded-error.js';
import path from 'node:path';
import { PDFParse } from 'pdf-parse';
import { storableTextProblem, toStorableText } from '../common/storable-text.js';

export class UnsupportedDocumentError extends CodedError {
  readonly code = 'unsupported_document';
}
export class UnreadableDocumentError extends CodedError {
  readonly code = 'unreadable_document';
}

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
 */
export async function parseDocument(filename: string, data: Buffer): Promise<ParsedDocument> {
  const extension = path.extname(filename).toLowerCase();
  if (TEXT_TYPES[extension]) {
    const text = decodeText(filename, data);
    return { contentType: TEXT_TYPES[extension], pageCount: null, pages: [{ page: null, text }] };
  }
  if (extension === '.pdf') {
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw new UnreadableDocumentError(`${filename} is not a PDF file`);
    const parser = new PDFParse({ data: new Uint8Array(data) });
    try {
      const result = await parser.getText();
      const pages = storablePages(result.pages.map((p) => ({ page: p.num, text: p.text })));
      if (!pages.some((p) => p.text.trim())) {
        throw new UnreadableDocumentError(`${filename} has no extractable text (scanned images are not supported)`);
      }
      return { contentType: 'application/pdf', pageCount: result.total, pages };
    } catch (error) {
      if (error instanceof UnreadableDocumentError) throw error;
      // The parser's own words may quote the file's internals; the client is told what it can act on.
      throw new UnreadableDocumentError(`${filename} could not be read as a PDF (damaged, encrypted or not a PDF)`);
    } finally {
      await parser.destroy().catch(() => undefined);
    }
  }
  throw new UnsupportedDocumentError(`${filename}: only .txt, .md and .pdf files are accepted`);
}

/** Extracted page texts as they are stored: without carriage returns, NUL characters or lone surrogates. */
export function storablePages(pages: Array<{ page: number; text: string }>): Array<{ page: number; text: string }> {
  return pages.map(({ page, text }) => ({ page, text: toStorableText(text.replace(/\r/g, '')) }));
}
