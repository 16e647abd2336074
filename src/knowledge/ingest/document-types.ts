import type { SandboxedFormat } from './parse-worker.js';

/** A kind of document the knowledge base accepts, by file extension. */
export interface DocumentType {
  contentType: string;
  /** What the messages call it: "could not be read as a PDF". */
  label: string;
  /** Parsed by this extractor in a worker thread (parse-sandbox); unset: read as UTF-8 text in process. */
  sandbox?: SandboxedFormat;
  /** Its leading bytes: zip archives (Office Open XML) and PDFs are checked for them before they are queued. */
  magic?: 'zip' | 'pdf';
  /** Lines starting with `#` are headings (markdown): chunks record the heading path they start under. */
  headings?: boolean;
}

export const DOCUMENT_TYPES: Readonly<Record<string, DocumentType>> = {
  '.txt': { contentType: 'text/plain', label: 'a text file' },
  '.md': { contentType: 'text/markdown', label: 'a markdown file', headings: true },
  '.pdf': { contentType: 'application/pdf', label: 'a PDF', sandbox: 'pdf', magic: 'pdf' },
  '.docx': { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', label: 'a Word document', sandbox: 'docx', magic: 'zip' },
  '.xlsx': { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', label: 'an Excel workbook', sandbox: 'xlsx', magic: 'zip' },
  '.csv': { contentType: 'text/csv', label: 'a CSV file', sandbox: 'csv' },
  '.html': { contentType: 'text/html', label: 'an HTML page', sandbox: 'html' },
  '.htm': { contentType: 'text/html', label: 'an HTML page', sandbox: 'html' },
};

/** Office files that may carry macros: refused by their extension, whatever they hold. */
export const MACRO_ENABLED_EXTENSIONS: ReadonlySet<string> = new Set(['.docm', '.dotm', '.xlsm', '.xltm', '.xlam', '.pptm', '.potm', '.ppsm', '.ppam']);

/** ".txt, .md, .pdf, …, .html and .htm": the accepted extensions, for messages. */
export function acceptedExtensions(): string {
  const names = Object.keys(DOCUMENT_TYPES);
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

const ZIP_LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
/** An OLE compound file: what Office writes for a password-protected .docx/.xlsx, and for the old binary .doc/.xls. */
const COMPOUND_FILE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export function startsWith(data: Uint8Array, bytes: number[]): boolean {
  return data.length >= bytes.length && bytes.every((byte, i) => data[i] === byte);
}

/** Why `data` cannot be an Office Open XML file (`type`), or null when it starts as a zip archive. */
export function zipMagicProblem(data: Uint8Array, type: DocumentType): string | null {
  if (startsWith(data, ZIP_LOCAL_HEADER)) return null;
  if (startsWith(data, COMPOUND_FILE)) return 'is encrypted (password-protected) or in the old binary Office format: save it again without a password, in the current format';
  return `is not ${type.label} (it is not a zip archive)`;
}
