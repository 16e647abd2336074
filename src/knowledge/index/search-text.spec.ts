import { tokenize } from '../../common/text.js';
import { FULL_TEXT_MAX_TERMS, fullTextQueryTerms, searchDocumentText, searchTextOfTokens, translatedFullTextQuery } from './search-text.js';

/** The query lexemes as they were before the cap: every distinct token, in tokenize's order. */
const uncapped = (query: string) =>
  [
    ...new Set(
      tokenize(query)
        .map((t) => t.replace(/[^\p{L}\p{N}_]/gu, ''))
        .filter(Boolean),
    ),
  ].map((t) => `'${t}'`);

describe('full-text query terms', () => {
  it('leaves a query of up to 32 distinct terms exactly as before', () => {
    for (const query of [
      'How do I reset the Aurora X1 router to factory settings?',
      '退货政策是什么？会员积分的有效期是多久？',
      "What's the e-mail of the 3.5 GHz team (Aurora X2)?",
      'a',
      '？？',
    ]) {
      const terms = fullTextQueryTerms(query);
      expect(terms.lexemes).toEqual(uncapped(query));
      expect(terms).toMatchObject({ total: terms.lexemes.length, dropped: 0 });
    }
  });

  it('keeps at most 32 distinct terms of a long query, those that come first, and counts the rest', () => {
    const filler = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}z`);
    const query = `How do I reset the Aurora X1 router? ${filler.join(' ')}`;
    const terms = fullTextQueryTerms(query);
    expect(FULL_TEXT_MAX_TERMS).toBe(32);
    expect(terms.lexemes).toHaveLength(32);
    expect(terms.lexemes.slice(0, 4)).toEqual(["'reset'", "'aurora'", "'x1'", "'router'"]);
    expect(terms.lexemes.slice(4)).toEqual(filler.slice(0, 28).map((w) => `'${w}'`));
    expect(terms).toMatchObject({ total: 404, dropped: 372 });
    // The same text always gives the same terms, and the tsquery built from them has no more than the cap.
    expect(fullTextQueryTerms(query)).toEqual(terms);
    expect(terms.lexemes.join(' | ').split(' | ')).toHaveLength(32);
  });

  it('keeps the leading question of a long Chinese query: its words and bigrams come before the filler', () => {
    const question = '会员积分的有效期是多久？';
    const query = question + Array.from({ length: 200 }, (_, i) => `第${i}段背景说明`).join('，');
    const terms = fullTextQueryTerms(query);
    expect(terms.lexemes).toHaveLength(32);
    const questionTerms = uncapped(question);
    expect(terms.lexemes).toEqual(expect.arrayContaining(questionTerms));
    expect(terms.dropped).toBe(terms.total - 32);
  });

  it('search text from tokens is the search text of the text', () => {
    const text = 'Reset the Aurora X1: hold the button 10 s. 长按复位键十秒钟，路由器会恢复出厂设置。';
    expect(searchTextOfTokens(tokenize(text))).toBe(searchDocumentText(text));
  });
});

describe('the full-text query of the question in the other language', () => {
  it('asks for every word through any of its translations, as the index writes them', () => {
    expect(translatedFullTextQuery([['控制'], ['保修期', '包修'], ['control', 'controls']])).toEqual({
      all: "'控制' & (('保修' & '修期') | '包修') & 'control':*",
      any: "'控制' | ('保修' & '修期') | '包修' | 'control':*",
      terms: 5,
    });
  });

  it('matches an English translation by the stem it shares with its inflections', () => {
    expect(translatedFullTextQuery([['warranty'], ['day'], ['go']])?.all).toBe("'warrant':* & 'day':* & 'go'");
  });

  it("leaves out a word's rarer senses before another word's first one, within the term cap", () => {
    const query = translatedFullTextQuery(
      [
        ['会员', '成员', '团员'],
        ['积分', '分数'],
      ],
      3,
    );
    expect(query).toEqual({ all: "('会员' | '成员') & '积分'", any: "'会员' | '成员' | '积分'", terms: 3 });
  });

  it('is null without a translation', () => {
    expect(translatedFullTextQuery([])).toBeNull();
    expect(translatedFullTextQuery([['!!!']])).toBeNull();
  });
});
