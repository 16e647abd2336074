import { isFunctionWordKey } from './function-words.js';
import { matchKey } from './match-keys.js';

describe('function words', () => {
  it('counts the prepositions and conjunctions the stopword list lacks ("per", "within", "though")', () => {
    for (const word of ['per', 'within', 'without', 'among', 'via', 'though', 'under', 'until']) expect(isFunctionWordKey(matchKey(word))).toBe(true);
  });

  it('does not count the verbs it keeps, nor words of place that name where', () => {
    for (const word of ['take', 'have', 'inside', 'behind', 'near', 'router']) expect(isFunctionWordKey(matchKey(word))).toBe(false);
  });
});
