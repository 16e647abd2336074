/** How much one document may yield; every format's extractor checks it as it goes, so a bomb stops early. */
export interface ExtractionLimits {
  maxPages: number;
  maxExtractedBytes: number;
}

/** Extracted text, page by page (`page` null for formats without pages). */
export interface ExtractedText {
  pageCount: number | null;
  pages: Array<{ page: number | null; text: string }>;
}

/** A document over one of its ExtractionLimits: extraction stops at once. */
export class ExtractionLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtractionLimitError';
  }
}

/** Counts what an extractor has taken so far against the limits and throws ExtractionLimitError at the first one passed. */
export class ExtractionBudget {
  private bytes = 0;

  constructor(private readonly limits: ExtractionLimits) {}

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
