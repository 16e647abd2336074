import { boundQuery, MAX_QUERY_LENGTH } from './bounded-query.js';

describe('boundQuery', () => {
  it('leaves a question within the bound whole', () => {
    const text = 'How do I reset the Aurora X1 router?';
    expect(boundQuery(text)).toEqual({ query: text, truncated: false, originalLength: text.length });
    const exact = 'x'.repeat(MAX_QUERY_LENGTH);
    expect(boundQuery(exact)).toEqual({ query: exact, truncated: false, originalLength: MAX_QUERY_LENGTH });
  });

  it('cuts English after the last sentence end within the bound', () => {
    const text = `How do I reset the router? ${'This sentence is only filler text. '.repeat(100)}`;
    const bounded = boundQuery(text);
    expect(bounded).toMatchObject({ truncated: true, originalLength: text.length });
    expect(bounded.query.length).toBeLessThanOrEqual(MAX_QUERY_LENGTH);
    expect(bounded.query.length).toBeGreaterThan(MAX_QUERY_LENGTH - 40);
    expect(bounded.query).toMatch(/^How do I reset the router\? .*filler text\.$/);
    expect(text.startsWith(bounded.query)).toBe(true);
  });

  it('does not take a full stop inside a word or number for a sentence end', () => {
    const text = `Version 3.5 of e.g.the firmware ${'word '.repeat(400)}`;
    const bounded = boundQuery(text, 100);
    expect(bounded.query).toMatch(/ word$/);
    expect(bounded.query.length).toBeLessThanOrEqual(100);
  });

  it('cuts Chinese after the last 。！？；', () => {
    const text = `积分的有效期是多久？${'这是一段背景说明，仅供参考。'.repeat(200)}`;
    const bounded = boundQuery(text);
    expect(bounded.query.length).toBeLessThanOrEqual(MAX_QUERY_LENGTH);
    expect(bounded.query).toMatch(/^积分的有效期是多久？.*仅供参考。$/);
  });

  it('without a sentence end, cuts at white space, or between Chinese characters', () => {
    const english = boundQuery(`reset ${'router '.repeat(300)}`, 100);
    expect(english.query).toMatch(/^reset( router)+$/);
    expect(english.query.length).toBeLessThanOrEqual(100);
    const chinese = boundQuery('路由器'.repeat(400), 100);
    expect(chinese.query).toBe('路由器'.repeat(400).slice(0, 100));
  });

  it('cuts hard when there is no boundary at all, never inside a surrogate pair', () => {
    expect(boundQuery('a'.repeat(300), 100).query).toBe('a'.repeat(100));
    const emoji = '😀'.repeat(300); // two code units each
    const bounded = boundQuery(`a${emoji}`, 100);
    expect(bounded.query.length).toBeLessThanOrEqual(100);
    expect(bounded.query).toBe(`a${'😀'.repeat(49)}`);
    expect(bounded.query).not.toMatch(/[\ud800-\udbff]$/);
  });

  it('skips white space at the start rather than returning nothing', () => {
    const bounded = boundQuery(`${' '.repeat(150)}${'word '.repeat(100)}`, 100);
    expect(bounded.query).toMatch(/^word( word)*$/);
    expect(bounded.originalLength).toBe(650);
  });
});
