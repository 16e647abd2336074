import { broaderKeys } from './hypernyms.js';
import { matchKey } from './match-keys.js';

const broader = (word: string) => [...broaderKeys(matchKey(word))];

describe('broaderKeys (WordNet hypernyms of common nouns)', () => {
  it('gives the classes one and two steps above a noun, as match keys', () => {
    expect(broader('wine')).toEqual(expect.arrayContaining([matchKey('alcohol'), matchKey('beverage')]));
    expect(broader('beer')).toContain(matchKey('alcohol')); // beer → brew → alcohol
    expect(broader('meals')).toContain(matchKey('food')); // any form of the noun: meal → nutriment → food
    expect(broader('taxi')).toContain(matchKey('car'));
  });

  it('gives nothing for a word used mostly as a verb or an adjective, nor for a stem shared with one ("sitting" of "sit")', () => {
    for (const word of ['close', 'cover', 'return', 'long', 'sits', 'starting']) expect(broader(word)).toEqual([]);
  });

  it('gives nothing for a word it does not hold, a Chinese word or a number', () => {
    for (const word of ['laptop', 'qwzx', '酒水', '2024', '']) expect(broader(word)).toEqual([]);
  });

  it('holds no function word among the broader words', () => {
    expect(broader('dog')).not.toContain('a');
    expect(broader('dog')).toEqual(expect.arrayContaining([matchKey('animal'), matchKey('carnivore')]));
  });
});
