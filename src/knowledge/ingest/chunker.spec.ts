import fc from 'fast-check';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { splitSentences } from '../../common/text.js';
import { buildChunkTree, buildChunkTreeIncrementally, overlapTail, packSentences, sentenceWindows } from './chunker.js';

/** Deterministic mixed Chinese/English text with line breaks, sentence ends of every kind, and a few very long sentences. */
function sample(sentences: number, seed = 1): string {
  const words = ['router', 'reset', 'firmware', 'warranty', '路由器', '固件', '保修', '滤芯', 'e.g.', '3.5', 'X1'];
  const ends = ['. ', '。', '！', '？', '!', '?', '；', ';', '\n', '\n\n', ' ', '.\n'];
  let state = seed;
  const next = (n: number) => (state = (state * 1103515245 + 12345) & 0x7fffffff) % n;
  let text = '';
  for (let i = 0; i < sentences; i += 1) {
    const length = next(20) === 0 ? 150 : 2 + next(12);
    const parts = Array.from({ length }, () => words[next(words.length)]);
    text += parts.join(next(2) ? ' ' : '') + ends[next(ends.length)];
  }
  return text;
}

describe('the incremental chunker builds the same tree as buildChunkTree', () => {
  const cases: Array<[string, string]> = [
    ['mixed text', sample(400)],
    ['no line breaks', sample(300).replace(/\n/g, ' ')],
    ['no sentence ends at all', 'word '.repeat(3000)],
    ['one page of Chinese without punctuation', '滤芯'.repeat(2500)],
    ['white space only', '   \n  '],
  ];
  for (const [label, text] of cases) {
    for (const sizes of [[1200, 400], [300, 100, 40], [250]]) {
      it(`${label}, sizes ${sizes.join(',')}`, async () => {
        const pages = [
          { page: 1, text },
          { page: 2, text: sample(50, 7) },
        ];
        for (const window of [64, 500, 32 * 1024]) {
          let pauses = 0;
          const tree = await buildChunkTreeIncrementally(pages, sizes, 20, { window, pause: async () => void (pauses += 1) });
          expect(tree).toEqual(buildChunkTree(pages, sizes, 20));
          if (window === 64 && text.trim()) expect(pauses).toBeGreaterThan(1);
        }
      });
    }
  }

  it('windows have exactly the sentences of the whole text (any text, any window size)', () => {
    const alphabet = fc.constantFrom('a', 'b', ' ', '.', '\n', '\r', '。', '！', '？', '!', '?', '；', ';', '路', '由', '\t', '…');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 400 }), fc.integer({ min: 1, max: 60 }), (chars, window) => {
        const text = chars.join('');
        const windows = [...sentenceWindows(text, window)];
        expect(windows.join('')).toBe(text);
        expect(windows.flatMap((part) => splitSentences(part))).toEqual(splitSentences(text));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('cuts windows only where sentences split, and they add up to the text', () => {
    const text = sample(500, 3);
    const windows = [...sentenceWindows(text, 200)];
    expect(windows.join('')).toBe(text);
    expect(windows.length).toBeGreaterThan(10);
    for (const window of windows.slice(0, -1)) expect(window.length).toBeLessThanOrEqual(200 + 150 * 12);
  });

  it('packSentences gives what it gave before it was made incremental (values from the previous implementation, but for overlaps that opened inside a word)', () => {
    expect(packSentences('One. Two sentences here. Three is a longer sentence than the others.', 30, 5)).toEqual([
      'One. Two sentences here.',
      'Three is a longer sentence tha',
      'tha n the others.',
    ]);
    expect(packSentences(`第一句话。第二句话比较长一些！第三句？${'x'.repeat(25)}`, 12, 3)).toEqual([
      '第一句话。',
      '第二句话比较长一些！',
      '一些！ 第三句？',
      'xxxxxxxxxxxx',
      'xxxxxxxxxxxx',
      'x',
    ]);
  });
});

describe('overlap', () => {
  it('repeats the end of the piece before from the first word that starts in it, never from inside a word', () => {
    const text = 'The router restarts and all settings, including the Wi-Fi password, are erased. Set a new one in the app.';
    // The last 19 characters are "ssword, are erased.": the next piece repeats only the words that start among them.
    expect(packSentences(text, 100, 19)).toEqual(['The router restarts and all settings, including the Wi-Fi password, are erased.', 'are erased. Set a new one in the app.']);
    expect(overlapTail('The Wi-Fi password, are erased.', 19)).toBe('are erased.');
    expect(overlapTail('including the password', 7)).toBe('');
    expect(overlapTail('including the password', 8)).toBe('password');
    expect(overlapTail('第二句话比较长一些！', 3)).toBe('一些！');
    expect(overlapTail('short', 10)).toBe('short');
    expect(overlapTail('长按设备背面的reset按钮十秒', 8)).toBe('按钮十秒');
    expect(overlapTail('installed between 2 and 4 a.m.', 9)).toBe('4 a.m.');
    expect(overlapTail('anything', 0)).toBe('');
  });
});

describe('heading paths: where in a document with headings each chunk starts', () => {
  const markdown = [
    '# Returns',
    'Aurora widgets may be returned within 45 days of delivery.',
    '## Refunds',
    'Refunds reach the card within five working days.',
    '```bash',
    '# not a heading: a comment in a code block',
    '```',
    'Cash refunds are not offered.',
    '# Warranty',
    'Two years on every part.',
  ].join('\n');
  const leaves = (nodes: ReturnType<typeof buildChunkTree>): ReturnType<typeof buildChunkTree> => nodes.flatMap((node) => (node.children.length ? leaves(node.children) : [node]));

  it('gives each chunk the headings it starts under, outermost first, at every level', () => {
    const tree = buildChunkTree([{ page: null, text: markdown, headings: true }], [120, 60], 0);
    expect(leaves(tree).map((leaf) => [leaf.location?.heading_path ?? null, leaf.text.split('\n')[0]])).toEqual([
      [['Returns'], '# Returns'],
      [['Returns'], 'Aurora widgets may be returned within 45 days of delivery.'],
      [['Returns', 'Refunds'], '## Refunds'],
      [['Returns', 'Refunds'], 'Refunds reach the card within five working days.'],
      [['Returns', 'Refunds'], '```bash # not a heading: a comment in a code block ```'],
      // A heading the packer joins to the sentence before it moves the path of the next chunk.
      [['Returns', 'Refunds'], 'Cash refunds are not offered. # Warranty'],
      [['Warranty'], 'Two years on every part.'],
    ]);
    expect(tree.map((node) => node.location)).toEqual([{ heading_path: ['Returns'] }, { heading_path: ['Returns', 'Refunds'] }, { heading_path: ['Returns', 'Refunds'] }]);
  });

  it('keeps the same chunks as before: headings change locations, never texts', async () => {
    const withHeadings = buildChunkTree([{ page: null, text: markdown, headings: true }], [120, 60], 10);
    const without = buildChunkTree([{ page: null, text: markdown }], [120, 60], 10);
    const texts = (nodes: typeof without): unknown => nodes.map((node) => [node.text, texts(node.children)]);
    expect(texts(withHeadings)).toEqual(texts(without));
    expect(leaves(without).every((leaf) => leaf.location === null)).toBe(true);
    expect(await buildChunkTreeIncrementally([{ page: null, text: markdown, headings: true }], [120, 60], 10, { window: 40 })).toEqual(withHeadings);
  });

  it('with splitAtHeadings (.docx, .html), starts a chunk at every heading: no chunk spans two sections', async () => {
    const page = { page: null, text: markdown, headings: true, splitAtHeadings: true };
    const tree = buildChunkTree([page], [1000, 400], 0);
    expect(tree.map((node) => [node.location?.heading_path, node.text])).toEqual([
      [['Returns'], '# Returns\nAurora widgets may be returned within 45 days of delivery.'],
      [
        ['Returns', 'Refunds'],
        '## Refunds\nRefunds reach the card within five working days. ```bash # not a heading: a comment in a code block\n``` Cash refunds are not offered.',
      ],
      [['Warranty'], '# Warranty\nTwo years on every part.'],
    ]);
    expect(leaves(tree).map((leaf) => leaf.location?.heading_path)).toEqual([['Returns'], ['Returns', 'Refunds'], ['Warranty']]);
    for (const window of [30, 32 * 1024]) expect(await buildChunkTreeIncrementally([page], [1000, 400], 0, { window })).toEqual(tree);
    const preamble = buildChunkTree([{ page: null, text: `Preface.\n${markdown}`, headings: true, splitAtHeadings: true }], [1000], 0);
    expect(preamble.map((node) => node.location)).toEqual([null, { heading_path: ['Returns'] }, { heading_path: ['Returns', 'Refunds'] }, { heading_path: ['Warranty'] }]);
  });

  it('gives text before the first heading no location, and keeps long headings short', () => {
    const tree = buildChunkTree([{ page: null, text: `# ${'Long '.repeat(100)}\nBody.`, headings: true }], [1000], 0);
    expect(tree[0].location?.heading_path?.[0].length).toBe(200);
    const [first] = buildChunkTree([{ page: null, text: 'Preface text here.', headings: true }], [1000], 0);
    expect(first.location).toBeNull();
  });
});
