import { titleFrom } from './session-title.js';

describe('titleFrom', () => {
  it('keeps a short message whole, on one line', () => {
    expect(titleFrom('  How long is\nthe   warranty? ')).toBe('How long is the warranty?');
    expect(titleFrom('   ')).toBe('New conversation');
    const sixty = 'a'.repeat(60);
    expect(titleFrom(sixty)).toBe(sixty);
  });

  it('cuts a long message between words and ends it with an ellipsis', () => {
    const question = 'How do I reset my Aurora X1 router to its factory settings without losing the parental controls?';
    const title = titleFrom(question);
    expect(title).toBe('How do I reset my Aurora X1 router to its factory settings…');
    expect(Array.from(title).length).toBeLessThanOrEqual(60);
  });

  it('cuts text without spaces (Chinese) at 59 characters plus the ellipsis, by code point', () => {
    const chinese = '会员积分多久过期'.repeat(10);
    const title = titleFrom(chinese);
    expect(Array.from(title)).toHaveLength(60);
    expect(title.endsWith('…')).toBe(true);
    expect(chinese.startsWith(title.slice(0, -1))).toBe(true);
    const emoji = '😀'.repeat(70);
    expect(Array.from(titleFrom(emoji))).toHaveLength(60);
  });
});
