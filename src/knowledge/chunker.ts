import { splitSentences } from '../common/text.js';

/** A chunk of the hierarchy before it is stored: `children` are one level finer. */
export interface ChunkNode {
  level: number;
  page: number | null;
  text: string;
  children: ChunkNode[];
}

/**
 * Packs sentences into pieces of at most `size` characters, each starting
 * with up to `overlap` characters carried over from the end of the previous
 * piece. A sentence longer than `size` is cut hard.
 */
export function packSentences(text: string, size: number, overlap: number): string[] {
  const sentences = splitSentences(text).flatMap((s) => (s.length <= size ? [s] : s.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? []));
  const pieces: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    const joiner = current && !/[\u3400-\u9fff]$/.test(current) ? ' ' : '';
    if (current && current.length + joiner.length + sentence.length > size) {
      pieces.push(current);
      const tail = overlap > 0 ? current.slice(-overlap) : '';
      current = tail && tail.length + sentence.length + 1 <= size ? `${tail} ${sentence}` : sentence;
    } else {
      current = current ? `${current}${joiner}${sentence}` : sentence;
    }
  }
  if (current.trim()) pieces.push(current);
  return pieces;
}

/**
 * Splits each page into a hierarchy: level 1 pieces of sizes[0] characters,
 * each split into level 2 pieces of sizes[1], and so on; the last level is
 * the leaves. With one size, every piece is a leaf.
 */
export function buildChunkTree(pages: Array<{ page: number | null; text: string }>, sizes: number[], overlap: number): ChunkNode[] {
  const split = (text: string, page: number | null, level: number): ChunkNode[] => {
    const size = sizes[level - 1];
    const pieces = packSentences(text, size, level === sizes.length ? overlap : 0);
    return pieces.map((piece) => ({
      level,
      page,
      text: piece,
      children: level < sizes.length ? split(piece, page, level + 1) : [],
    }));
  };
  return pages.flatMap(({ page, text }) => (text.trim() ? split(text, page, 1) : []));
}
