import { contentWords, tokenize } from './text.js';
import { matchKey, matchKeys, wordKeys } from './match-keys.js';

describe('term matching for the local judge and the local model', () => {
  it('gives English words one key whatever their plural, tense or case', () => {
    expect(matchKeys('Warranties WARRANTY warranty')).toEqual(new Set(['warranti']));
    expect(matchKeys('reset resets resetting')).toEqual(new Set(['reset']));
    expect(matchKeys('ship shipped shipping')).toEqual(new Set(['ship']));
    expect(matchKey('consumers')).toBe(matchKey('consumer'));
  });

  it("gives an irregular form its lemma's key, and leaves alone a form that is also a word of its own", () => {
    expect(matchKey('bought')).toBe(matchKey('buy'));
    expect(matchKey('paid')).toBe(matchKey('pays'));
    expect(matchKey('children')).toBe(matchKey('child'));
    expect(matchKey('added')).toBe(matchKey('add'));
    // Every form of such a lemma goes with it, not only the irregular ones: "adding" and "adds" with "added".
    expect(new Set(['add', 'added', 'adding', 'adds'].map(matchKey)).size).toBe(1);
    expect(new Set(['exceed', 'exceeded', 'exceeding'].map(matchKey)).size).toBe(1);
    // "saw" (a tool), "left" (a side) and "found" (to set up) are words of their own; "lives" is of life and of live.
    expect(matchKey('saw')).not.toBe(matchKey('see'));
    expect(matchKey('left')).not.toBe(matchKey('leave'));
    expect(matchKey('found')).not.toBe(matchKey('find'));
    expect(matchKey('lives')).toBe(matchKey('live'));
    // An acronym's spelling is not a form: LED is not "lead".
    expect(matchKey('led')).not.toBe(matchKey('lead'));
    // The auxiliaries keep their own keys: "has" is not "have" (a word of weight in a question), "was" not "be".
    expect(matchKey('has')).not.toBe(matchKey('have'));
    expect(matchKey('was')).not.toBe(matchKey('be'));
  });

  it('gives a comparative or superlative not built by rule its adjective\'s key ("further" of far), and leaves the regular ones to the stemmer', () => {
    expect(matchKey('further')).toBe(matchKey('far'));
    expect(matchKey('furthest')).toBe(matchKey('far'));
    expect(matchKey('better')).toBe(matchKey('good'));
    expect(matchKey('worst')).toBe(matchKey('bad'));
    expect(matchKey('older')).toBe('older');
  });

  it('reads a word with an English clitic by the word ("node\'s", "node’s" → "node"), and a contracted stopword as none ("What\'s")', () => {
    expect(matchKeys("each node's placement")).toEqual(matchKeys('each node placement'));
    expect(matchKeys('each node’s placement')).toEqual(matchKeys('each node placement'));
    expect(matchKeys("What's the limit? They're late, and I'm sure you'll see it's over.")).toEqual(matchKeys('limit they late sure see over'));
    expect(contentWords("What's the daily food allowance for my son's trip?")).toEqual(['daily', 'food', 'allowance', 'son', 'trip']);
    expect(matchKeys("the X1's light")).toEqual(matchKeys('the X1 light'));
    expect(matchKey('cafe\u0301s')).not.toBe(matchKey("cafe\u0301's"));
    expect(matchKey("cafe\u0301's")).toBe(matchKey('cafe\u0301'));
    // "n't" is no clitic of a word: the negation stays.
    expect(contentWords("Don't unplug it")).toContain("Don't");
  });

  it('leaves Chinese words, numbers and model names as tokenize gives them', () => {
    for (const text of ['基础版服务条款', '2023年报销制度', 'Aurora X1 2.4 GHz']) {
      const tokens = tokenize(text).filter((token) => !/^[a-z]+$/.test(token));
      expect([...matchKeys(text)]).toEqual(expect.arrayContaining(tokens));
    }
    expect(matchKey('x1')).toBe('x1');
    expect(matchKey('2024')).toBe('2024');
  });

  it('counts words without the bigrams that straddle them', () => {
    expect(matchKeys('退款怎么规定')).toEqual(new Set(['退款', '规定', '款怎', '么规']));
    expect(wordKeys('退款怎么规定')).toEqual(new Set(['退款', '规定']));
    expect(wordKeys('How do I reset the routers?')).toEqual(new Set(['reset', 'router']));
  });
});
