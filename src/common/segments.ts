/**
 * Intl.Segmenter over long texts. V8 iterates a segmenter's result in time
 * that grows with the square of the input's length: 40 000 Chinese
 * characters took 0.5 s to cut into words, 160 000 characters of short
 * sentences 7 s to cut into sentences. A text is therefore segmented in
 * pieces of at most PIECE characters, each ending where the segmenter breaks
 * anyway, so that the segments are those of the whole text:
 * - for words, after white space or Chinese punctuation (，；： only before a
 *   Han character or a space: between digits they join a number);
 * - for sentences, after a line break, else after 。！？ before a letter or a
 *   digit, else after . ! or ? and white space before a capital, a letter of
 *   a script without case, or a quotation mark or bracket opening a capital;
 * never before a combining mark, a joiner or a direction mark. Only a run of
 * PIECE characters with no such place (a "sentence" of thousands of
 * characters, a megabyte without a space) is cut elsewhere: after its last
 * space, else where the piece is full, never inside a surrogate pair.
 */

const PIECE = 1000;

const wordSegmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** White space that always ends a word (not U+00A0 or U+202F, which join a number's digits, nor U+FEFF, which the segmenter reads as nothing). */
const SPACE = /[ \t\n\r\f\v\u3000]/;
/** Chinese punctuation that ends a word; ，；： only before a Han character or a space (between digits they join a number). */
const CHINESE_PUNCTUATION = /[。！？、（）《》「」『』“”]/;
const CHINESE_JOINING_PUNCTUATION = /[，；：]/;
/** A Chinese (Han) character, compatibility ideographs included. */
export const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
/** A word of Han characters only. */
export const HAN_WORD = new RegExp(`^${HAN.source}+$`);
/** What attaches to the character before it (a combining mark, a joiner or a direction mark): never the first of a piece. */
const ATTACHED = /[\p{M}\p{Cf}]/u;
const LINE_BREAK = /[\n\u0085\u2028\u2029]/;
const CHINESE_STOP = /[。！？]/;
const LATIN_STOP = /[.!?]/;
const OPENING = /["'“‘([]/;
const SENTENCE_START = /[\p{Lu}\p{Lt}\p{Lo}]/u;

type Cut = (text: string, from: number, to: number) => number;

/** Where a piece may end: at `cut`, not before an attached character nor between CR and LF. */
function canEndAt(text: string, cut: number): boolean {
  return !ATTACHED.test(text[cut] ?? '') && !(text[cut - 1] === '\r' && text[cut] === '\n');
}

/** The last place in (from, to] after which a word ends: -1 for none. */
function wordCut(text: string, from: number, to: number): number {
  for (let cut = to; cut > from; cut -= 1) {
    const before = text[cut - 1];
    const after = text[cut] ?? '';
    if (!canEndAt(text, cut)) continue;
    if (SPACE.test(before) || CHINESE_PUNCTUATION.test(before)) return cut;
    if (CHINESE_JOINING_PUNCTUATION.test(before) && (HAN.test(after) || SPACE.test(after))) return cut;
  }
  return -1;
}

/** The last place in (from, to] where a sentence ends (see above): -1 for none. */
function sentenceCut(text: string, from: number, to: number): number {
  for (let cut = to; cut > from; cut -= 1) {
    const before = text[cut - 1];
    if (LINE_BREAK.test(before) || (before === '\r' && text[cut] !== '\n')) return cut;
  }
  for (let cut = to; cut > from; cut -= 1) if (CHINESE_STOP.test(text[cut - 1]) && /[\p{L}\p{N}]/u.test(text[cut] ?? '')) return cut;
  for (let cut = to; cut > from + 1; cut -= 1) {
    const next = text[cut] ?? '';
    const opens = SENTENCE_START.test(next) || (OPENING.test(next) && /\p{Lu}/u.test(text[cut + 1] ?? ''));
    if (!opens || !/[ \t]/.test(text[cut - 1])) continue;
    let stop = cut - 1;
    while (stop > from && /[ \t]/.test(text[stop - 1])) stop -= 1;
    if (stop > from && LATIN_STOP.test(text[stop - 1])) return cut;
  }
  return -1;
}

/**
 * Where a piece without a place the segmenter breaks at anyway ends: after its last space (a word stays whole), else
 * where it is full, never inside a surrogate pair nor before an attached character.
 */
function forcedCut(text: string, from: number, to: number): number {
  for (let cut = to; cut > from; cut -= 1) if (SPACE.test(text[cut - 1]) && canEndAt(text, cut)) return cut;
  const splitsPair = (cut: number) => /[\ud800-\udbff]/.test(text[cut - 1]) && /[\udc00-\udfff]/.test(text[cut] ?? '');
  for (let cut = to; cut > from + 1; cut -= 1) if (canEndAt(text, cut) && !splitsPair(cut)) return cut;
  return splitsPair(to) ? to - 1 : to;
}

/** The segments of `text` as `segmenter` cuts it, their index in the whole text, segmented PIECE characters at most at a time. */
function* inPieces(segmenter: Intl.Segmenter, text: string, cutOf: Cut): Generator<Intl.SegmentData> {
  for (let start = 0; start < text.length;) {
    let end = text.length;
    if (end - start > PIECE) {
      end = cutOf(text, start, start + PIECE);
      if (end < 0) end = forcedCut(text, start, start + PIECE);
    }
    if (start === 0 && end === text.length) {
      yield* segmenter.segment(text);
      return;
    }
    for (const data of segmenter.segment(text.slice(start, end))) yield { ...data, index: data.index + start, input: text };
    start = end;
  }
}

/** The word segments of a text (Intl.Segmenter with `zh` word granularity, which cuts English by spaces and Chinese by its dictionary). */
export function wordSegments(text: string): Iterable<Intl.SegmentData> {
  return inPieces(wordSegmenter, text, wordCut);
}

/** The sentence segments of a text (Intl.Segmenter with sentence granularity). */
export function sentenceSegments(text: string): Iterable<Intl.SegmentData> {
  return inPieces(sentenceSegmenter, text, sentenceCut);
}
