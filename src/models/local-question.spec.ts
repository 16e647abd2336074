import { questionPart } from './local-question.js';

const terms = (question: string) => questionPart(question, new Map()).terms;

describe('how the local model reads a question', () => {
  it("gives the parts of a hyphenated word one word's weight, whichever of two such words comes first", () => {
    expect(terms('Where do I name my Wi-Fi network?').get('wi')).toBe(0.5);
    expect(terms('Where do I name my Wi-Fi network?').get('name')).toBe(1);
    expect(Object.fromEntries(terms('Is the X1-Pro like the X1-Max?'))).toEqual(Object.fromEntries(terms('Is the X1-Max like the X1-Pro?')));
    // a letter is no part ("e-mail"), nor is a word the question also writes alone
    expect(terms('Can I e-mail support?').get('mail')).toBe(1);
    expect(terms('Is Wi-Fi or fi faster?').get('fi')).toBe(1);
  });

  it('counts the unit of "how many days" for a quarter, but not a word of what is counted ("how many day passes")', () => {
    expect(terms('How many days do I have?').get('dai')).toBe(0.25);
    expect(terms('How many day passes are left?').get('dai')).toBe(1);
  });

  it('reads the verb of a phrasal verb only after a subject or a modal', () => {
    expect(questionPart("Can I turn off the internet for my son's phone?", new Map()).particleOfVerb).toEqual(new Map([['turn', 'off']]));
    expect(questionPart('Light on the X1 blinks red, what does it mean?', new Map()).particleOfVerb).toEqual(new Map());
  });
});
