import { splitSentences } from '../../common/text.js';

/** A chunk of the hierarchy before it is stored: `children` are one level finer. */
export interface ChunkNode {
  level: number;
  page: number | null;
  text: string;
  children: ChunkNode[];
}

const ENDS_IN_CJK = /[\u3400-\u9fff]$/;

/**
 * Packs sentences, given one at a time, into pieces of at most `size`
 * characters, each starting with up to `overlap` characters carried over
 * from the end of the previous piece. A sentence longer than `size` is cut
 * hard.
 */
const MARKDOWN_HEADING = /^#{1,6}\s/;

export class SentencePacker {
  private current = '';
  /** A heading stays on a line of its own, so readers of the chunk (the offline model's answers) can tell it from its text. */
  private afterHeading = false;

  constructor(
    private readonly size: number,
    private readonly overlap: number,
    private readonly emit: (piece: string) => void,
  ) {}

  push(sentence: string): void {
    if (sentence.length > this.size) {
      for (const part of sentence.match(new RegExp(`[\\s\\S]{1,${this.size}}`, 'g')) ?? []) this.add(part);
    } else {
      this.add(sentence);
    }
  }

  /** Emits the last piece. */
  finish(): void {
    if (this.current.trim()) this.emit(this.current);
    this.current = '';
  }

  private add(sentence: string): void {
    const current = this.current;
    const joiner = !current ? '' : this.afterHeading ? '\n' : ENDS_IN_CJK.test(current) ? '' : ' ';
    this.afterHeading = MARKDOWN_HEADING.test(sentence);
    if (current && current.length + joiner.length + sentence.length > this.size) {
      this.emit(current);
      const tail = this.overlap > 0 ? current.slice(-this.overlap) : '';
      this.current = tail && tail.length + sentence.length + 1 <= this.size ? `${tail} ${sentence}` : sentence;
    } else {
      this.current = current ? `${current}${joiner}${sentence}` : sentence;
    }
  }
}

/** Packs the sentences of `text` (see SentencePacker). */
export function packSentences(text: string, size: number, overlap: number): string[] {
  const pieces: string[] = [];
  const packer = new SentencePacker(size, overlap, (piece) => pieces.push(piece));
  for (const sentence of splitSentences(text)) packer.push(sentence);
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
 * the leaves. With one size, every piece is a leaf.
 */
export function buildChunkTree(pages: Array<{ page: number | null; text: string }>, sizes: number[], overlap: number): ChunkNode[] {
  return pages.flatMap(({ page, text }) => (text.trim() ? splitLevel(text, page, 1, sizes, overlap) : []));
}

/**
 * buildChunkTree for large documents: the same tree, built a window of text
 * at a time with `pause` between windows, so a long document does not hold
 * the event loop.
 */
export async function buildChunkTreeIncrementally(
  pages: Array<{ page: number | null; text: string }>,
  sizes: number[],
  overlap: number,
  { pause = yieldToEventLoop, window = CHUNK_WINDOW }: { pause?: Yielder; window?: number } = {},
): Promise<ChunkNode[]> {
  const roots: ChunkNode[] = [];
  for (const { page, text } of pages) {
    if (!text.trim()) continue;
    const packer = new SentencePacker(sizes[0], sizes.length === 1 ? overlap : 0, (piece) => roots.push(nodeOf(piece, page, 1, sizes, overlap)));
    for (const part of sentenceWindows(text, window)) {
      for (const sentence of splitSentences(part)) packer.push(sentence);
      await pause();
    }
    packer.finish();
  }
  return roots;
}

function splitLevel(text: string, page: number | null, level: number, sizes: number[], overlap: number): ChunkNode[] {
  const pieces = packSentences(text, sizes[level - 1], level === sizes.length ? overlap : 0);
  return pieces.map((piece) => nodeOf(piece, page, level, sizes, overlap));
}

function nodeOf(text: string, page: number | null, level: number, sizes: number[], overlap: number): ChunkNode {
  return { level, page, text, children: level < sizes.length ? splitLevel(text, page, level + 1, sizes, overlap) : [] };
}
