import mammoth from 'mammoth';
import { ExtractedText, ExtractionBudget, UnreadableContentError } from '../extraction-budget.js';
import { htmlToText } from './html-text.js';
import { pathSegments, readArchiveParts, storedArchive } from './office-archive.js';

/** Folders of a Word document's archive mammoth does not read for text: images, embedded files, themes, fonts, properties. */
const SKIPPED_FOLDERS = new Set(['media', 'embeddings', 'theme', 'fonts', 'docprops', 'customxml', 'glossary', 'webextensions', 'activex']);
const SKIPPED_FILES = new Set(['fonttable.xml', 'settings.xml', 'websettings.xml', 'people.xml', 'styleswitheffects.xml']);

/** The parts mammoth reads: the document, its styles, numbering, notes and comments, and the relationships between them. */
export function isWordPart(name: string): boolean {
  const segments = pathSegments(name);
  const file = segments[segments.length - 1];
  if (!file.endsWith('.xml') && !file.endsWith('.rels')) return false;
  return !segments.some((segment) => SKIPPED_FOLDERS.has(segment)) && !SKIPPED_FILES.has(file);
}

/** Word's "Title" paragraphs are headings too (mammoth maps Heading 1–6 to h1–h6 itself). */
const STYLE_MAP = ["p[style-name='Title'] => h1:fresh"];

/**
 * A .docx document as markdown-like text: its parts are inflated under the
 * document's extraction limit first (readArchiveParts), then mammoth turns
 * them into HTML (headings as headings; images are not read) and htmlToText
 * into text with `#` headings.
 */
export async function extractDocxText(data: Uint8Array, budget: ExtractionBudget): Promise<ExtractedText> {
  const parts = await readArchiveParts(data, isWordPart, budget.limits.maxExtractedBytes);
  if (!parts.has('[Content_Types].xml')) throw new UnreadableContentError('it has no content types ([Content_Types].xml): it is not a .docx file');
  const { value: html } = await mammoth.convertToHtml(
    { buffer: Buffer.from(storedArchive(parts)) },
    { styleMap: STYLE_MAP, convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
  );
  return { pageCount: null, pages: [{ page: null, text: htmlToText(html, budget), headings: true, splitAtHeadings: true }] };
}
