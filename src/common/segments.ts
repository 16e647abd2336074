/**
 * Intl.Segmenter over long texts. V8 iterates a segmenter's result in time
 * that grows with the square of the input's length: 40 000 Chinese
 * characters took 0.5 s to cut into words, 160 000 characters of short
 * sentences 7 s to cut into sentences. A text is therefore segmented in
 * pieces of at most PIECE characters, each ending where the segmenter breaks
 * anyway, so that the segments are those of the whole text:
 * - for words, after white space or a Chinese punctuation mark;
 * - for sentences, after a line break, else after 。！？ before a Chinese
 *   character, else after . ! or ? and white space before a capital.
 * Only a run of PIECE characters with no such place (a megabyte without a
 * space, a "sentence" of thousands of characters) is cut where the piece is
 * full, never inside a surrogate pair.
 */

const PIECE = 1000;

const wordSegmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

const WORD_END = /[\s，。！？；：、（）《》「」『』“”]/;
const CHINESE_STOP = /[。！？]/;
const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
const LATIN_STOP = /[.!?]/;
const CAPITAL = /[A-Z]/;

/** The last place in (from, to) after which a word ends: -1 for none. */
function wordCut(text: string, from: number, to: number): number {
  for (let cut = to; cut > from; cut -= 1) if (WORD_END.test(text[cut - 1])) return cut;
  return -1;
}

/** The last place in (from, to) where a sentence ends (see above): -1 for none. */
function sentenceCut(text: string, from: number, to: number): number {
  for (let cut = to; cut > from; cut -= 1) if (text[cut - 1] === '\n') return cut;
  for (let cut = to; cut > from; cut -= 1) if (CHINESE_STOP.test(text[cut - 1]) && HAN.test(text[cut] ?? '')) return cut;
  for (let cut = to; cut > from + 1; cut -= 1) {
    if (/\s/.test(text[cut - 1]) && CAPITAL.test(text[cut] ?? '')) {
      let stop = cut - 1;
      while (stop > from && /\s/.test(text[stop - 1])) stop -= 1;
      if (stop > from && LATIN_STOP.test(text[stop - 1])) return cut;
    }
  }
  return -1;
}

/** The segments of `text` as `segmenter` cuts it, their index in the whole text, segmented PIECE characters at most at a time. */
function* inPieces(segmenter: Intl.Segmenter, text: string, cutOf: (text: string, from: number, to: number) => number): Generator<Intl.SegmentData> {
  for (let start = 0; start < text.length;) {
    let end = text.length;
    if (end - start > PIECE) {
      end = cutOf(text, start, start + PIECE);
      if (end < 0) {
        end = start + PIECE;
        // A surrogate pair stays whole.
        if (/[\ud800-\udbff]/.test(text[end - 1]) && /[\udc00-\udfff]/.test(text[end])) end -= 1;
      }
    }
    const piece = start === 0 && end === text.length ? text : text.slice(start, end);
    for (const data of segmenter.segment(piece)) yield start === 0 ? data : { ...data, index: data.index + start, input: text };
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
