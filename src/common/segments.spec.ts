import { jest } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { contentWords, tokenize } from './text.js';
import { wordKeys } from './match-keys.js';
import { sentencesOf } from './sentences.js';

const corpusFolder = path.resolve('corpus');
/** The sample corpus, both languages, over and over: 60 000 characters of ordinary text with its headings and line breaks. */
const LONG_TEXT = (() => {
  const documents = readdirSync(corpusFolder).map((file) => readFileSync(path.join(corpusFolder, file), 'utf8'));
  let text = '';
  while (text.length < 60_000) text += documents.join('\n');
  return text;
})();

/** The longest text Intl.Segmenter is given while `run` runs. */
function longestSegmented(run: () => unknown): number {
  const segment = jest.spyOn(Intl.Segmenter.prototype, 'segment');
  try {
    run();
    return Math.max(0, ...segment.mock.calls.map(([text]) => text.length));
  } finally {
    segment.mockRestore();
  }
}

describe('segmenting a long text (Intl.Segmenter iterates in time growing with the square of its input)', () => {
  it('gives the segmenter pieces of at most 1 000 characters, for words and for sentences', () => {
    expect(longestSegmented(() => tokenize(LONG_TEXT))).toBeLessThanOrEqual(1000);
    expect(longestSegmented(() => contentWords(LONG_TEXT))).toBeLessThanOrEqual(1000);
    expect(longestSegmented(() => wordKeys(LONG_TEXT))).toBeLessThanOrEqual(1000);
    expect(longestSegmented(() => sentencesOf(LONG_TEXT))).toBeLessThanOrEqual(1000);
  });

  it('cuts ordinary text into the same words and sentences as the whole text would be cut', () => {
    // Every line is shorter than a piece, and the segmenters always break at a line break: line by line is the whole text's cut.
    const lines = LONG_TEXT.split('\n');
    expect(lines.every((line) => line.length < 1000)).toBe(true);
    expect(new Set(tokenize(LONG_TEXT))).toEqual(new Set(lines.flatMap((line) => tokenize(line))));
    const byLine = new Map<string, string>();
    for (const word of lines.flatMap((line) => contentWords(line))) if (!byLine.has(word.toLowerCase())) byLine.set(word.toLowerCase(), word);
    expect(contentWords(LONG_TEXT)).toEqual([...byLine.values()]);
    const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });
    const wholeSentences = [...sentences.segment(LONG_TEXT)].map((s) => s.segment.trim()).filter((s) => s.length > 1);
    expect(sentencesOf(LONG_TEXT)).toEqual(wholeSentences);
  });

  it('still cuts a run of thousands of characters without a space or a stop, at most 1 000 at a time', () => {
    const run = '退货保修政策积分会员路由器'.repeat(2_000);
    expect(longestSegmented(() => tokenize(run))).toBeLessThanOrEqual(1000);
    expect(tokenize(run).length).toBeGreaterThan(0);
    expect(sentencesOf('a'.repeat(5_000)).join('')).toBe('a'.repeat(5_000));
    // A cut never falls inside a surrogate pair.
    const emoji = '😀'.repeat(3_000);
    expect(sentencesOf(emoji).join('')).toBe(emoji);
  });
});
