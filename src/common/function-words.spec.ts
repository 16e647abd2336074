import { isFunctionWordKey } from './function-words.js';
import { matchKey } from './match-keys.js';

describe('function words', () => {
  it('counts the prepositions, conjunctions and negations the stopword list lacks ("per", "within", "though", "not")', () => {
    for (const word of ['per', 'within', 'without', 'during', 'among', 'via', 'though', 'not', 'no', 'under', 'until']) expect(isFunctionWordKey(matchKey(word))).toBe(true);
  });

  it('does not count the verbs it keeps, words of place that name where, nor a word whose stem a content word shares', () => {
    for (const word of ['take', 'have', 'inside', 'behind', 'near', 'router', 'exception', 'unlikely']) expect(isFunctionWordKey(matchKey(word))).toBe(false);
  });
});
