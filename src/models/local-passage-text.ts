import { fromMarkdown } from 'mdast-util-from-markdown';
import { toString as mdastToString } from 'mdast-util-to-string';
import { sentencesOf } from '../common/sentences.js';
import { containsCjk } from '../common/text.js';

/*
 * Passages arrive as the chunker stores them: Markdown whose line breaks
 * became spaces, or nothing after Chinese ("# Manual ## Setup Connect the
 * router. ## Reset To reset…", "# 政策## 退货自签收…"), so headings, list
 * items and table rows run on inside one line. The line breaks are put back
 * first, then a Markdown parser removes the inline markup, and headings are
 * left out: they name a section, they do not answer. Where a heading ends and
 * its text begins is known at a line break or a list or quote marker, and
 * otherwise guessed from capitalisation in English; in Chinese nothing tells,
 * and the heading stays joined to its text (without its marker).
 */

const CJK_BEFORE = '(?<=[\\u3400-\\u9fff\\uff01-\\uff1f\\u3002])';
const SENTENCE_END = /[.!?。！？；;]/;
const HEADING_MARKER = new RegExp(`(?:^|\\s|${CJK_BEFORE})#{1,6}[ \\t]+`, 'g');
/** A list item or quote starting after a space or straight after Chinese text. */
const BLOCK_MARKER = new RegExp(`(?:[ \\t]+|${CJK_BEFORE})(?:[-*+]|\\d{1,3}[.)]|>)[ \\t]+(?=\\S)`);
/** The same at the start of a line or after a sentence: always a new line. */
const BLOCK_MARKER_AFTER_SENTENCE = new RegExp(`(?:^|(?<=[.!?。！？:：;；])[ \\t]*|[ \\t]*${CJK_BEFORE})([-*+]|\\d{1,3}[.)]|>)[ \\t]+(?=\\S)`, 'g');
const MAX_HEADING_WORDS = 10;
/** Words that open an English sentence far more often than they stand capitalised inside a heading. */
const SENTENCE_OPENERS = new Set([
  'a',
  'after',
  'all',
  'an',
  'any',
  'at',
  'before',
  'by',
  'during',
  'each',
  'every',
  'for',
  'from',
  'if',
  'in',
  'it',
  'its',
  'most',
  'no',
  'on',
  'once',
  'only',
  'our',
  'please',
  'some',
  'that',
  'the',
  'their',
  'there',
  'these',
  'they',
  'this',
  'those',
  'to',
  'unlike',
  'we',
  'when',
  'with',
  'without',
  'you',
  'your',
]);
const CAPITALISED = /^["'“‘(]?\p{Lu}/u;
const LOWER_CASE = /^["'“‘(]?\p{Ll}/u;

/** Where the text after an English heading starts, guessed from capitalisation; undefined when it cannot be told. */
function englishHeadingEnd(segment: string): number | undefined {
  const words = [...segment.matchAll(/\S+/g)];
  if (words.length < 2 || !/^[\p{Script=Latin}\d]/u.test(words[0][0]) || containsCjk(words[0][0])) return undefined;
  const sentenceEnd = words.findIndex((word) => SENTENCE_END.test(word[0].slice(-1)));
  const firstSentence = sentenceEnd < 0 ? words : words.slice(0, sentenceEnd + 1);
  const opener = (i: number) => SENTENCE_OPENERS.has(firstSentence[i][0].replace(/^["'“‘(]/, '').toLowerCase());
  let start: number | undefined;
  if (LOWER_CASE.test(firstSentence[1]?.[0] ?? '')) {
    // "Factory reset To reset the X1…": a sentence-case heading ends before a capitalised word, a sentence opener first.
    const capitalised = firstSentence.map((_, i) => i).filter((i) => i >= 2 && CAPITALISED.test(firstSentence[i][0]));
    start = capitalised.find(opener) ?? capitalised[0];
  } else {
    // "Booking Travel Employees book…", "Warranty The Aurora X1 comes…": the text starts at a sentence opener in the
    // run of capitalised words, or else at its last word.
    let end = 1;
    while (end < firstSentence.length && !LOWER_CASE.test(firstSentence[end][0])) end += 1;
    if (end < firstSentence.length) start = Array.from({ length: end - 1 }, (_, i) => i + 1).find(opener) ?? end - 1;
  }
  return start !== undefined && start <= MAX_HEADING_WORDS ? firstSentence[start].index : undefined;
}

/**
 * Splits what follows a heading marker into the heading and the text after
 * it. `beforeHeading`: another heading follows directly.
 */
function splitHeading(segment: string, beforeHeading: boolean): { heading: string; body: string } {
  const lineBreak = segment.indexOf('\n');
  if (lineBreak >= 0) return { heading: segment.slice(0, lineBreak).trim(), body: segment.slice(lineBreak + 1) };
  const marker = BLOCK_MARKER.exec(segment);
  const beforeMarker = marker ? segment.slice(0, marker.index) : '';
  const atMarker = marker && !SENTENCE_END.test(beforeMarker) && beforeMarker.trim().split(/\s+/).length <= MAX_HEADING_WORDS ? marker.index : undefined;
  const wordCount = segment.trim().split(/\s+/).length;
  if (atMarker === undefined && !SENTENCE_END.test(segment) && (beforeHeading || wordCount <= MAX_HEADING_WORDS)) {
    return { heading: segment.trim(), body: '' };
  }
  const guessed = englishHeadingEnd(segment);
  const at = Math.min(atMarker ?? Infinity, guessed ?? Infinity);
  return at === Infinity ? { heading: '', body: segment } : { heading: segment.slice(0, at).trim(), body: segment.slice(at) };
}

/** GFM tables, their rows on one line or several: a header row, a delimiter row (|---|:--:|) and body rows. */
const TABLE = /((?:\|[^|\n]*)+\|)[ \t]*\n?[ \t]*(\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+)((?:[ \t]*\n?[ \t]*(?:\|[^|\n]*)+\|)*)/g;

/** A table as one line per body row, each cell labelled by its column ("Plan: Pro, Price: 20 USD."). */
function tableAsLines(header: string, body: string): string {
  const columns = header
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());
  const rows: string[][] = [];
  let row: string[] = [];
  for (const cell of body.split('|').slice(1, -1)) {
    // Between two rows on one line ("| a | b | | c | d |") the split leaves a blank cell.
    if (row.length === 0 && !cell.trim()) continue;
    row.push(cell.trim());
    if (row.length === columns.length) {
      rows.push(row);
      row = [];
    }
  }
  if (row.length > 0) rows.push(row);
  const lines = rows.map((cells) => {
    const zh = containsCjk(cells.join(''));
    const labelled = cells.map((cell, i) => (cell && columns[i] ? `${columns[i]}${zh ? '：' : ': '}${cell}` : cell)).filter(Boolean);
    return labelled.join(zh ? '，' : ', ') + (zh ? '。' : '.');
  });
  return `\n\n${lines.join('\n')}\n\n`;
}

/** Puts list items and quotes that run on inside a line back on lines of their own. */
function restoreBlockLines(text: string): string {
  return text
    .replace(BLOCK_MARKER_AFTER_SENTENCE, (_, marker: string) => `\n${marker} `)
    .split('\n')
    .map((line) => {
      // In a list, items without closing punctuation run on too: "- Unplug it - Wait > Note…", "1. Unplug it 2. Wait".
      const item = /^(?:([-*+])|(\d{1,3})([.)]))[ \t]/.exec(line);
      if (!item) return line;
      const [, bullet, number, delimiter] = item;
      let next = Number(number) + 1;
      const nextItem = bullet ? `(\\${bullet})` : `(\\d{1,3})\\${delimiter}`;
      return line.replace(new RegExp(`[ \\t]+(?:${nextItem}|>)[ \\t]+(?=\\S)`, 'g'), (found: string, marker: string | undefined) => {
        // Numbered items must count on (1. 2. 3.): "press 3 buttons" is no item.
        if (marker !== undefined && !bullet && Number(marker) !== next) return found;
        if (marker !== undefined && !bullet) next += 1;
        return `\n${found.trim()} `;
      });
    })
    .join('\n');
}

/** A passage's text under its headings: the headings above it (outermost first) and the text, its line breaks back. */
interface Section {
  headings: string[];
  body: string;
}

/** The passage as Markdown sections, each with its line breaks back and its heading trail beside it instead of in it. */
function headingSections(text: string, above: string[]): Section[] {
  const markers = [...text.matchAll(HEADING_MARKER)];
  const sections: Section[] = [{ headings: above, body: text.slice(0, markers[0]?.index ?? text.length) }];
  const trail = [...above];
  markers.forEach((marker, i) => {
    const level = /#+/.exec(marker[0])![0].length;
    const segment = text.slice(marker.index + marker[0].length, markers[i + 1]?.index ?? text.length);
    const { heading, body } = splitHeading(segment, i + 1 < markers.length);
    trail.length = Math.min(trail.length, level - 1);
    trail[level - 1] = heading;
    sections.push({ headings: trail.filter(Boolean), body });
  });
  return sections.map((section) => ({ ...section, body: restoreBlockLines(section.body.trim()) }));
}

type MarkdownBlock = ReturnType<typeof fromMarkdown>['children'][number];

/** Plain text of Markdown blocks, one entry per paragraph, list item, quoted paragraph or line of code; headings left out. */
function plainBlocks(nodes: MarkdownBlock[], out: string[] = []): string[] {
  for (const node of nodes) {
    if (node.type === 'paragraph') out.push(mdastToString(node, { includeHtml: false }));
    else if (node.type === 'code') out.push(...node.value.split('\n'));
    else if (node.type === 'list' || node.type === 'listItem' || node.type === 'blockquote') plainBlocks(node.children, out);
  }
  return out;
}

/** A first line that is a title without Markdown's marker: short, plain, and no sentence. */
function isBareTitle(line: string): boolean {
  return /^[\p{L}\p{N}]/u.test(line) && !SENTENCE_END.test(line) && line.trim().split(/\s+/).length <= MAX_HEADING_WORDS;
}

/** A sentence of a passage and the headings it stands under (outermost first; in Chinese a heading may stay joined to its text). */
export interface PassageSentence {
  text: string;
  headings: string[];
}

/** The sentences of a passage as plain prose, without Markdown markup and without its headings, each with the headings above it. */
export function passageSentencesWithHeadings(passage: string): PassageSentence[] {
  const lineBreak = passage.indexOf('\n');
  const text = lineBreak > 0 && isBareTitle(passage.slice(0, lineBreak)) ? passage.slice(lineBreak + 1) : passage;
  const out: PassageSentence[] = [];
  let headings: string[] = [];
  const add = (block: string) => out.push(...sentencesOf(block).map((sentence) => ({ text: sentence, headings })));
  // Code fences first, so that a "#" comment in code is not taken for a heading; every other part is Markdown.
  text.split('```').forEach((part, i) => {
    if (i % 2 === 1) {
      add(part.replace(/^[\w+-]*\s/, '').trim()); // without the fence's language tag
      return;
    }
    const tablesAsLines = part.replace(TABLE, (_, header: string, _delimiter: string, body: string) => tableAsLines(header, body));
    for (const section of headingSections(tablesAsLines, headings)) {
      headings = section.headings;
      for (const block of plainBlocks(fromMarkdown(section.body).children)) add(block);
    }
  });
  return out;
}

/** The sentences of a passage as plain prose: without Markdown markup, and without its headings. */
export function passageSentences(passage: string): string[] {
  return passageSentencesWithHeadings(passage).map((sentence) => sentence.text);
}
