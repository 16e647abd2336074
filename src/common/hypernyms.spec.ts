import { broaderKeys } from './hypernyms.js';
import { matchKey } from './match-keys.js';

const broader = (word: string) => [...broaderKeys(matchKey(word))];

describe('broaderKeys (WordNet hypernyms of common nouns)', () => {
  it('gives the classes one and two steps above a noun, as match keys', () => {
    expect(broader('wine')).toEqual(expect.arrayContaining([matchKey('alcohol'), matchKey('beverage')]));
    expect(broader('beer')).toContain(matchKey('alcohol')); // beer → brew → alcohol
    expect(broader('dinners')).toContain(matchKey('meal')); // any form of the noun
    expect(broader('taxi')).toContain(matchKey('car'));
  });

  it('gives nothing for a word used mostly as a verb or an adjective, nor for a stem shared with one ("sitting" of "sit")', () => {
    for (const word of ['close', 'cover', 'return', 'long', 'sits', 'starting']) expect(broader(word)).toEqual([]);
  });

  it('reads a stem as its commonest noun only ("status", not "statue"), and no auxiliary or modal as a noun ("may" is no month)', () => {
    expect(broader('status')).not.toContain(matchKey('sculpture'));
    for (const word of ['may', 'can', 'will', 'must']) expect(broader(word)).toEqual([]);
    expect(broader('men')).toEqual(broader('man')); // an irregular form is read as its lemma, not as a noun of its own
  });

  it('gives no class so wide that it matches anything, nor a broader word read as a verb', () => {
    expect(broader('problem')).not.toContain(matchKey('condition')); // a condition: 2 368 nouns below it
    expect(broader('day')).not.toContain(matchKey('measure'));
    expect(broader('kit')).not.toContain(matchKey('contain')); // "container", read by its stem, is mostly the verb
  });

  it('gives nothing for a word it does not hold, a Chinese word or a number', () => {
    for (const word of ['laptop', 'qwzx', '酒水', '2024', '']) expect(broader(word)).toEqual([]);
  });

  it('holds no function word among the broader words', () => {
    expect(broader('dinner')).toEqual(expect.arrayContaining([matchKey('meal')]));
    expect(broader('dinner').filter((key) => ['a', 'the', 'of'].includes(key))).toEqual([]);
  });
});
