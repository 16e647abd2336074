import { Parser } from 'htmlparser2';
import type { ExtractedText, ExtractionBudget } from '../extraction-budget.js';
import { decodeHtml } from './text-decoding.js';

/** Elements whose content is never text a reader sees, or is the page's furniture rather than its content. */
const SKIPPED = new Set([
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'audio',
  'video',
  'select',
  'button',
  'textarea',
  'nav',
  'aside',
  'footer',
]);

/** Elements that end a line (a paragraph, an item, a row) where they open and close. */
const BLOCKS = new Set([
  'address',
  'article',
  'blockquote',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'form',
  'header',
  'hr',
  'legend',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'tr',
  'ul',
  'caption',
]);

const HEADING = /^h([1-6])$/;
const CELLS = new Set(['td', 'th']);

/** Text pieces joined at the end: runs of white space collapse outside `pre`, breaks are '\n'. */
class TextOut {
  private readonly parts: string[] = [];
  /** Line breaks written since the last visible character (2 at the start: nothing to separate from). */
  private trailingBreaks = 2;

  write(text: string): void {
    this.parts.push(text);
    const lastVisible = text.search(/\S\s*$/);
    if (lastVisible >= 0) this.trailingBreaks = text.slice(lastVisible).split('\n').length - 1;
    else this.trailingBreaks += text.split('\n').length - 1;
  }

  /** Ends the line; `blank` leaves an empty line (between paragraphs and around headings). Breaks do not add up. */
  break(blank = false): void {
    for (const wanted = blank ? 2 : 1; this.trailingBreaks < wanted; this.trailingBreaks += 1) this.parts.push('\n');
  }

  atLineStart(): boolean {
    return this.trailingBreaks > 0;
  }

  text(): string {
    return this.parts
      .join('')
      .split('\n')
      .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }
}

/**
 * The text of an HTML page (or of the HTML mammoth makes of a .docx) as
 * markdown-like text: `h1`–`h6` become `#`–`######` lines, so the chunker
 * keeps each passage's heading path; paragraphs, items and rows become lines,
 * table cells are separated by ` | `, and a link keeps its text. Scripts,
 * styles, forms' controls, embedded objects and the page's navigation,
 * asides and footer are left out; when the page marks its main content
 * (`<main>` or `role="main"`), only that is kept. Text is counted against
 * `budget` as it is read.
 */
export function htmlToText(html: string, budget: ExtractionBudget): string {
  const all = new TextOut();
  const main = new TextOut();
  const open: string[] = [];
  let skipping = 0;
  let inMain = 0;
  let inPre = 0;
  let heading: { level: number; text: string } | null = null;
  const outs = () => (inMain > 0 ? [all, main] : [all]);
  const write = (text: string) => {
    budget.take(text);
    for (const out of outs()) out.write(text);
  };
  // Only headings make `#` lines: text that starts a line with `#` (a hashtag, a comment in a code block) is escaped.
  const writeText = (text: string) => {
    let escaped = inPre > 0 ? text.replace(/\n([ \t]*)#/g, '\n$1\\#') : text;
    if (all.atLineStart()) escaped = escaped.replace(/^(\s*)#/, '$1\\#');
    write(escaped);
  };
  const lineBreak = (blank = false) => {
    for (const out of outs()) out.break(blank);
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const roleMain = attributes.role?.toLowerCase() === 'main';
        open.push(roleMain ? `${name}#main` : name);
        if (skipping > 0 || SKIPPED.has(name)) {
          skipping += 1;
          return;
        }
        if (name === 'main' || roleMain) inMain += 1;
        const level = HEADING.exec(name);
        if (level && !heading) {
          heading = { level: Number(level[1]), text: '' };
          return;
        }
        if (heading) {
          heading.text += ' ';
          return;
        }
        if (name === 'pre') inPre += 1;
        if (name === 'br') lineBreak();
        else if (CELLS.has(name)) write(' | ');
        else if (BLOCKS.has(name)) lineBreak(name === 'p' || name === 'table' || name === 'pre' || name === 'blockquote');
        if (name === 'li') write('- ');
      },
      ontext(text) {
        if (skipping > 0) return;
        if (heading) {
          heading.text += text;
          return;
        }
        writeText(inPre > 0 ? text : text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        const opened = open.pop() ?? name;
        if (skipping > 0) {
          skipping -= 1;
          return;
        }
        if (name === 'main' || opened.endsWith('#main')) inMain = Math.max(0, inMain - 1);
        if (heading && HEADING.test(name)) {
          const title = heading.text.replace(/\s+/g, ' ').trim();
          const level = heading.level;
          heading = null;
          if (title) {
            lineBreak(true);
            write(`${'#'.repeat(level)} ${title}`);
            lineBreak(true);
          }
          return;
        }
        if (heading) return;
        if (name === 'pre') inPre = Math.max(0, inPre - 1);
        if (BLOCKS.has(name)) lineBreak(name === 'p' || name === 'table' || name === 'pre' || name === 'blockquote');
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  const mainText = main.text();
  return mainText ? mainText : all.text();
}

/** An .html page (in the encoding it declares, see decodeHtml) as markdown-like text (see htmlToText). */
export async function extractHtmlText(data: Uint8Array, budget: ExtractionBudget): Promise<ExtractedText> {
  return { pageCount: null, pages: [{ page: null, text: htmlToText(decodeHtml(data), budget), headings: true, splitAtHeadings: true }] };
}
