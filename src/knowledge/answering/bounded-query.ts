/** Longest query retrieval takes whole (UTF-16 code units); a longer question is shortened to its start. */
export const MAX_QUERY_LENGTH = 1000;

export interface BoundedQuery {
  /** The question, or its start when it was longer than the bound. */
  query: string;
  truncated: boolean;
  /** Length of the question as received. */
  originalLength: number;
}

const SENTENCE_END = /[。！？!?；;…]/;
const CJK = /[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/;
const SPACE = /\s/;

/**
 * Shortens a question retrieval cannot take whole to at most `max` code
 * units: its start, cut after the last sentence end (。！？!?；; or a full stop
 * before white space, or a line break) in the second half of the bound;
 * failing that at the last white space or between Chinese characters; failing
 * that at `max`, never inside a surrogate pair. A question leads and what
 * follows is context, so the start is what is kept.
 */
export function boundQuery(text: string, max = MAX_QUERY_LENGTH): BoundedQuery {
  const originalLength = text.length;
  if (originalLength <= max) return { query: text, truncated: false, originalLength };
  const floor = Math.floor(max / 2);
  let sentenceCut = -1;
  let wordCut = -1;
  for (let i = max; i > floor && sentenceCut < 0; i -= 1) {
    // Cutting before text[i]: after text[i - 1].
    const before = text[i - 1];
    const at = text[i];
    if (SENTENCE_END.test(before) || before === '\n' || (before === '.' && SPACE.test(at))) sentenceCut = i;
    else if (wordCut < 0 && (SPACE.test(at) || SPACE.test(before) || (CJK.test(before) && CJK.test(at)))) wordCut = i;
  }
  let cut = sentenceCut >= 0 ? sentenceCut : wordCut >= 0 ? wordCut : max;
  // Never leave half of a surrogate pair.
  if (/[\ud800-\udbff]/.test(text[cut - 1]) && /[\udc00-\udfff]/.test(text[cut] ?? '')) cut -= 1;
  const query = text.slice(0, cut).trimEnd();
  // Only white space before the cut: shorten what follows it instead.
  if (!query) return { ...boundQuery(text.trimStart(), max), originalLength };
  return { query, truncated: true, originalLength };
}
