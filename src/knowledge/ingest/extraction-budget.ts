/** How much one document may yield; every format's extractor checks it as it goes, so a bomb stops early. */
export interface ExtractionLimits {
  maxPages: number;
  /** Text extracted, in UTF-8 bytes; for a zip-based document (.docx, .xlsx) also the bytes its parts inflate to. */
  maxExtractedBytes: number;
}

/** Where a chunk came from, besides its page: a spreadsheet's sheet and row(s), or the headings above a passage. */
export interface ChunkLocation {
  /** The sheet's name (a spreadsheet; absent for a CSV file). */
  sheet?: string;
  /** The row's number as the spreadsheet shows it (the header row is usually 1). */
  row?: number;
  /** The headings the passage is under, outermost first. */
  heading_path?: string[];
}

/**
 * A stretch of a document's text: a PDF page, or the whole text of a format
 * without pages. With `headings`, lines starting with `#` to `######` are
 * headings (markdown, and what .docx and .html are converted to), and each
 * chunk records the heading path it starts under. With `splitAtHeadings`
 * too, every heading starts a new chunk, so that no chunk spans two sections
 * (.docx, .html; markdown files keep the chunks they always had).
 */
export interface TextSection {
  page: number | null;
  text: string;
  headings?: boolean;
  splitAtHeadings?: boolean;
}

/** One data row of a table, as text that names each value's column (`Product: Aurora X1; Price: 199 EUR`). */
export interface TableRow {
  row: number;
  text: string;
}

/** The data rows of a spreadsheet's sheet or of a CSV file (`sheet` null): each row becomes a leaf of its own. */
export interface TableSection {
  sheet: string | null;
  rows: TableRow[];
}

/** Extracted text, page by page (`page` null for formats without pages), and the rows of tables. */
export interface ExtractedText {
  pageCount: number | null;
  pages: TextSection[];
  tables?: TableSection[];
}

/** A document over one of its ExtractionLimits: extraction stops at once. */
export class ExtractionLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtractionLimitError';
  }
}

/**
 * A document an extractor cannot read, for a reason it words itself (its
 * message quotes nothing of the file, so the client may see it).
 */
export class UnreadableContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableContentError';
  }
}

/** Counts what an extractor has taken so far against the limits and throws ExtractionLimitError at the first one passed. */
export class ExtractionBudget {
  private bytes = 0;

  constructor(readonly limits: ExtractionLimits) {}

  /** Before any text is extracted: a document with more pages is refused unread. */
  checkPageCount(pages: number): void {
    if (pages > this.limits.maxPages) {
      throw new ExtractionLimitError(`it has ${pages} pages, more than the ${this.limits.maxPages} a document may have`);
    }
  }

  /** Counts `text` (UTF-8 bytes) as extracted. */
  take(text: string): void {
    this.bytes += Buffer.byteLength(text, 'utf8');
    if (this.bytes > this.limits.maxExtractedBytes) {
      throw new ExtractionLimitError(`it holds more than ${this.limits.maxExtractedBytes} bytes of text`);
    }
  }
}
