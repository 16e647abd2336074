import { jest } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { contentWords, tokenize } from './text.js';
import { wordKeys } from './match-keys.js';
import { sentencesOf } from './sentences.js';
import { sentenceSegments, wordSegments } from './segments.js';

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

  it('cuts text on one line, in other scripts and with numbers, into the same segments as the whole text would be cut', () => {
    const words = new Intl.Segmenter('zh', { granularity: 'word' });
    const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });
    const texts = [
      LONG_TEXT.slice(0, 12_000).replace(/\n+/g, ' '),
      'Это первое предложение о маршрутизаторе. Второе предложение здесь! '.repeat(60),
      '2023 年起保修两年。X1 的固件自动更新。「重置」需要 10 秒。'.repeat(100),
      '"It is." "Is it?" He said so. (The X1 resets.) '.repeat(60),
      'ルーターを再起動します。設定は保持されます。'.repeat(100),
      '价格 1，000 元；型号：X1，编号 12\u202F500 与 abc\uFEFFdef，还有 e\u0301 和 a\u200Db。'.repeat(60),
      'First line.\r\nSecond line\rThird line\u2028fourth line\u2029fifth. '.repeat(60),
    ];
    const cut = (segments: Iterable<Intl.SegmentData>) => [...segments].map(({ index, segment }) => `${index}:${segment}`);
    for (const text of texts) {
      expect(text.length).toBeGreaterThan(2000);
      expect(cut(wordSegments(text))).toEqual(cut(words.segment(text)));
      expect(cut(sentenceSegments(text))).toEqual(cut(sentences.segment(text)));
    }
    // CR LF where a piece would end after the CR (the 1 000th character) stays one segment.
    const crlf = 'a'.repeat(999) + '\r\n' + 'word '.repeat(400);
    expect(cut(wordSegments(crlf))).toEqual(cut(words.segment(crlf)));
  });

  it('still cuts a run of thousands of characters without a space or a stop, at most 1 000 at a time, keeping surrogate pairs whole', () => {
    const run = '退货保修政策积分会员路由器'.repeat(2_000);
    expect(longestSegmented(() => tokenize(run))).toBeLessThanOrEqual(1000);
    expect(tokenize(run).length).toBeGreaterThan(0);
    expect(sentencesOf('a'.repeat(5_000)).join('')).toBe('a'.repeat(5_000));
    // An odd number of characters before the pairs puts a piece's end inside one, but for the guard.
    const emoji = 'a' + '😀'.repeat(3_000);
    expect([...sentenceSegments(emoji)].every(({ segment }) => !/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(segment))).toBe(true);
    expect([...wordSegments(emoji)].map(({ segment }) => segment).join('')).toBe(emoji);
    // A sentence of thousands of words is cut after a space, not inside a word.
    const words = 'word '.repeat(2_000);
    expect([...sentenceSegments(words)].every(({ segment }) => segment.endsWith(' '))).toBe(true);
  });
});
