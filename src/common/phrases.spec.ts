import { isPhraseKey, phraseKeys } from './phrases.js';

/** The one phrase key two texts share. */
function shared(english: string, chinese: string): string[] {
  const chineseKeys = phraseKeys(chinese);
  return [...phraseKeys(english)].filter((key) => chineseKeys.has(key));
}

describe('phrases', () => {
  it('gives an English phrase and its Chinese translation one key', () => {
    expect(shared('Parental controls let you pause the internet.', 'X1 的家长控制可以做什么？')).toHaveLength(1);
    expect(shared('What do I get as a gold card member?', '满 5000 元升级为金卡会员。')).toHaveLength(1);
  });

  it('finds a particle up to two words after its verb, not further', () => {
    const poweredOn = shared('Power it on and wait until the light turns green.', '通电后要等多久？');
    expect(poweredOn).toHaveLength(1);
    expect(shared('Power the router on.', '通电后要等多久？')).toEqual(poweredOn);
    expect(shared('Power the new white router on.', '通电后要等多久？')).toEqual([]);
  });

  it('finds the words of a compound only next to each other and in order', () => {
    expect(shared('Controls for parental leave.', '家长控制')).toEqual([]);
    expect(shared('Parental leave controls.', '家长控制')).toEqual([]);
  });

  it('marks its keys as phrase keys', () => {
    const keys = [...phraseKeys('家长控制')];
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every(isPhraseKey)).toBe(true);
    expect(isPhraseKey('control')).toBe(false);
  });

  it('reads a text without phrases as none', () => {
    expect(phraseKeys('')).toEqual(new Set());
    expect(phraseKeys('\u0000\ud800 \u202e')).toEqual(new Set());
  });
});
