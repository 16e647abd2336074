import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from 'pdfjs-dist/types/src/display/api.js';
import { ExtractedText, ExtractionBudget } from '../extraction-budget.js';

/**
 * The text of a PDF, page by page, with pdf.js. The page count is checked
 * before any page is read, and each page's text is read as a stream and
 * counted as it comes, so a content stream that inflates to hundreds of MB
 * is given up after `budget` bytes of text rather than inflated whole.
 */
export async function extractPdfText(data: Uint8Array, budget: ExtractionBudget): Promise<ExtractedText> {
  const document = await getDocument({ data, verbosity: VerbosityLevel.ERRORS, isEvalSupported: false }).promise;
  try {
    budget.checkPageCount(document.numPages);
    const pages: ExtractedText['pages'] = [];
    for (let number = 1; number <= document.numPages; number += 1) {
      const page = await document.getPage(number);
      const reader = page.streamTextContent().getReader();
      const parts: string[] = [];
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          for (const item of value.items as TextItem[]) {
            if (typeof item.str !== 'string') continue; // marked content
            const text = item.hasEOL ? `${item.str}\n` : item.str;
            budget.take(text);
            parts.push(text);
          }
        }
      } catch (error) {
        await reader.cancel(error).catch(() => undefined);
        throw error;
      }
      pages.push({ page: number, text: parts.join('') });
      page.cleanup();
    }
    return { pageCount: document.numPages, pages };
  } finally {
    await document.destroy().catch(() => undefined);
  }
}
