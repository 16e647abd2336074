import { isPhraseKey, phrasalVerbs, phraseKeys } from './phrases.js';

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

  it('finds a particle right after its verb or after a pronoun, not after a noun or across a sentence', () => {
    const poweredOn = shared('Power it on and wait until the light turns green.', '通电后要等多久？');
    expect(poweredOn).toHaveLength(1);
    expect(shared('Power on the router.', '通电后要等多久？')).toEqual(poweredOn);
    expect(shared('Power the router on.', '通电后要等多久？')).toEqual([]);
    expect(shared('Log files in the folder are rotated daily.', '如何注册账号？')).toEqual([]);
    expect(shared('Check the power. On the back is a switch.', '通电后要等多久？')).toEqual([]);
    expect(shared('Power it. On the back is a switch.', '通电后要等多久？')).toEqual([]);
  });

  it('finds a Chinese translation only where the words of the text begin and end (交通电话 holds no 通电)', () => {
    expect(shared('Power it on and wait.', '交通电话请拨打客服热线。')).toEqual([]);
    expect(shared('Power it on and wait.', 'X1 通电后要等多久才能用？')).toHaveLength(1);
  });

  it('reads no translation that translates many phrases as any of them (开始: "turn on", "set out"…)', () => {
    expect(phraseKeys('我们什么时候开始？')).toEqual(new Set());
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

  it('finds the phrasal verbs of a sentence, and of a question only where a word stands as a verb', () => {
    expect(phrasalVerbs('Power it on and wait until the status light turns solid green.', { verbsOnly: false })).toEqual(new Set(['power on']));
    expect(phrasalVerbs("Can I turn off the internet for my son's phone?", { verbsOnly: true })).toEqual(new Set(['turn off']));
    expect(phrasalVerbs('How do I set it up?', { verbsOnly: true })).toEqual(new Set(['set up']));
    expect(phrasalVerbs("Why won't it power on?", { verbsOnly: true })).toEqual(new Set(['power on']));
    // "the light on the X1" is a noun and a preposition, not "light on", nor is a question's opening noun a verb
    expect(phrasalVerbs('What does the light on the X1 mean?', { verbsOnly: true })).toEqual(new Set());
    expect(phrasalVerbs('Light on the X1 blinks red, what does it mean?', { verbsOnly: true })).toEqual(new Set());
    // a sentence's verb before a noun and its particle
    expect(phrasalVerbs('Turn the router off at night.', { verbsOnly: false })).toContain('turn off');
    expect(phrasalVerbs('关掉路由器', { verbsOnly: false })).toEqual(new Set());
  });
});
