import { HAN } from '../../common/segments.js';
import { splitSentences } from '../../common/text.js';
import type { ChunkLocation, TextSection } from './extraction-budget.js';
import { headingSections, HeadingTrail } from './heading-trail.js';

/** A chunk of the hierarchy before it is stored: `children` are one level finer. */
export interface ChunkNode {
  level: number;
  page: number | null;
  /** Where in its document it came from besides the page (heading path, sheet and row); null: nothing more. */
  location: ChunkLocation | null;
  text: string;
  children: ChunkNode[];
}

const ENDS_IN_CJK = /[\u3400-\u9fff]$/;

const MARKDOWN_HEADING = /^#{1,6}\s/;

/**
 * Packs sentences, given one at a time, into pieces of at most `size`
 * characters, each starting with up to `overlap` characters carried over
 * from the end of the previous piece. A sentence longer than `size` is cut
 * hard. Each piece is emitted with the mark given with its first sentence
 * (the heading trail there, for instance).
 */
export class SentencePacker<Mark = undefined> {
  private current = '';
  private currentMark: Mark | undefined;
  /** A heading stays on a line of its own, so readers of the chunk (the offline model's answers) can tell it from its text. */
  private afterHeading = false;

  constructor(
    private readonly size: number,
    private readonly overlap: number,
    private readonly emit: (piece: string, mark: Mark | undefined) => void,
  ) {}

  push(sentence: string, mark?: Mark): void {
    if (sentence.length > this.size) {
      for (const part of sentence.match(new RegExp(`[\\s\\S]{1,${this.size}}`, 'g')) ?? []) this.add(part, mark);
    } else {
      this.add(sentence, mark);
    }
  }

  /** Emits the last piece. */
  finish(): void {
    if (this.current.trim()) this.emit(this.current, this.currentMark);
    this.current = '';
  }

  private add(sentence: string, mark: Mark | undefined): void {
    const current = this.current;
    const joiner = !current ? '' : this.afterHeading ? '\n' : ENDS_IN_CJK.test(current) ? '' : ' ';
    this.afterHeading = MARKDOWN_HEADING.test(sentence);
    if (current && current.length + joiner.length + sentence.length > this.size) {
      this.emit(current, this.currentMark);
      const tail = overlapTail(current, this.overlap);
      this.current = tail && tail.length + sentence.length + 1 <= this.size ? `${tail} ${sentence}` : sentence;
      this.currentMark = mark;
    } else {
      if (!current) this.currentMark = mark;
      this.current = current ? `${current}${joiner}${sentence}` : sentence;
    }
  }
}

/** Where the next word starts in a tail that opens inside one: a space, or a Chinese character. */
const WORD_START = new RegExp(`\\s|${HAN.source}`);

/** A letter or digit of a script that spaces its words (Latin, Cyrillic…), not a Han character. */
const SPACED_WORD_CHARACTER = /^[\p{L}\p{N}]$/u;

function insideWord(before: string, first: string): boolean {
  return SPACED_WORD_CHARACTER.test(before) && SPACED_WORD_CHARACTER.test(first) && !HAN.test(before) && !HAN.test(first);
}

/**
 * What the next piece repeats of `piece`: its last `overlap` characters, from the first word that starts among them, so
 * that no piece opens in the middle of a word ("sword, are erased." of "password, are erased."), which an answer quoting
 * the piece's first sentence would show. Nothing when no word starts there.
 */
export function overlapTail(piece: string, overlap: number): string {
  if (overlap <= 0) return '';
  const tail = piece.slice(-overlap);
  if (tail.length === piece.length || !insideWord(piece[piece.length - tail.length - 1], tail[0])) return tail.trimStart();
  // The next word: after a space, or a Chinese character (reset按钮, with no space before 按).
  const next = tail.search(WORD_START);
  return next < 0 ? '' : tail.slice(next).trimStart();
}

/** Packs the sentences of `text` (see SentencePacker). */
export function packSentences(text: string, size: number, overlap: number): string[] {
  return packTrailedSentences(text, size, overlap, null).map(({ piece }) => piece);
}

/** packSentences, each piece with the heading trail at its start (`trail`: at the start of `text`; null: no headings). */
function packTrailedSentences(text: string, size: number, overlap: number, trail: HeadingTrail | null): Array<{ piece: string; trail: HeadingTrail | null }> {
  const pieces: Array<{ piece: string; trail: HeadingTrail | null }> = [];
  const packer = new SentencePacker<HeadingTrail>(size, overlap, (piece, mark) => pieces.push({ piece, trail: mark ?? null }));
  for (const sentence of splitSentences(text)) {
    if (trail) trail = trail.see(sentence);
    packer.push(sentence, trail ?? undefined);
  }
  packer.finish();
  return pieces;
}

/** Characters of text read per step by the incremental chunker (a step then yields to the event loop). */
export const CHUNK_WINDOW = 32 * 1024;

/**
 * Cuts `text` into consecutive windows of about `window` characters, each
 * ending where splitSentences splits anyway (after 。！？!?；; or before a line
 * break), so the sentences of the windows are exactly the sentences of the
 * whole text. A window without such a place grows until the next one.
 */
export function* sentenceWindows(text: string, window = CHUNK_WINDOW): Generator<string> {
  let start = 0;
  while (text.length - start > window) {
    const cut = safeCut(text, start, start + window);
    if (cut < 0) break;
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

const SENTENCE_END = new Set(['。', '！', '？', '!', '?', '；', ';']);

/** The last place in (start, end] (or, failing that, after end) where splitSentences splits; -1 when there is none. */
function safeCut(text: string, start: number, end: number): number {
  for (let i = Math.min(end, text.length) - 1; i > start; i -= 1) {
    if (text[i] === '\n') return i;
    if (SENTENCE_END.has(text[i])) return i + 1;
  }
  for (let i = Math.max(end, start + 1); i < text.length; i += 1) {
    if (text[i] === '\n') return i;
    if (SENTENCE_END.has(text[i])) return i + 1;
  }
  return -1;
}

/** How the incremental chunker gives way to other work between windows. */
export type Yielder = () => Promise<void>;

/** Lets the event loop run other callbacks (I/O, timers) before continuing. */
export const yieldToEventLoop: Yielder = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Splits each page into a hierarchy: level 1 pieces of sizes[0] characters,
 * each split into level 2 pieces of sizes[1], and so on; the last level is
 * the leaves. With one size, every piece is a leaf. In a page with
 * `headings`, each chunk's location is the heading path it starts under;
 * with `splitAtHeadings`, each heading starts a new chunk at every level.
 */
export function buildChunkTree(pages: TextSection[], sizes: number[], overlap: number): ChunkNode[] {
  return pages.flatMap(({ page, text, headings, splitAtHeadings }) => {
    if (!text.trim()) return [];
    let trail = headings ? HeadingTrail.start(text) : null;
    return sectionsOf(text, splitAtHeadings).flatMap((section) => {
      const nodes = splitLevel(section, page, 1, sizes, overlap, trail);
      // A section holds one heading, its first line: the trail the next one starts from.
      trail = trail?.see(splitSentences(section)[0] ?? '') ?? null;
      return nodes;
    });
  });
}

function sectionsOf(text: string, splitAtHeadings: boolean | undefined): string[] {
  return splitAtHeadings ? headingSections(text) : [text];
}

/**
 * buildChunkTree for large documents: the same tree, built a window of text
 * at a time with `pause` between windows, so a long document does not hold
 * the event loop.
 */
export async function buildChunkTreeIncrementally(
  pages: TextSection[],
  sizes: number[],
  overlap: number,
  { pause = yieldToEventLoop, window = CHUNK_WINDOW }: { pause?: Yielder; window?: number } = {},
): Promise<ChunkNode[]> {
  const roots: ChunkNode[] = [];
  for (const { page, text, headings, splitAtHeadings } of pages) {
    if (!text.trim()) continue;
    let trail = headings ? HeadingTrail.start(text) : null;
    for (const section of sectionsOf(text, splitAtHeadings)) {
      const packer = new SentencePacker<HeadingTrail>(sizes[0], sizes.length === 1 ? overlap : 0, (piece, mark) =>
        roots.push(nodeOf(piece, page, 1, sizes, overlap, mark ?? null)),
      );
      for (const part of sentenceWindows(section, window)) {
        for (const sentence of splitSentences(part)) {
          if (trail) trail = trail.see(sentence);
          packer.push(sentence, trail ?? undefined);
        }
        await pause();
      }
      packer.finish();
    }
  }
  return roots;
}

function splitLevel(text: string, page: number | null, level: number, sizes: number[], overlap: number, trail: HeadingTrail | null): ChunkNode[] {
  const pieces = packTrailedSentences(text, sizes[level - 1], level === sizes.length ? overlap : 0, trail);
  return pieces.map(({ piece, trail: start }) => nodeOf(piece, page, level, sizes, overlap, start));
}

/** A node and its children; `trail`: the heading trail at its start (its first sentence seen), null without headings. */
function nodeOf(text: string, page: number | null, level: number, sizes: number[], overlap: number, trail: HeadingTrail | null): ChunkNode {
  return {
    level,
    page,
    location: trail?.location() ?? null,
    text,
    children: level < sizes.length ? splitLevel(text, page, level + 1, sizes, overlap, trail) : [],
  };
}
