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

  describe('a word the glossary knows where the segmenter left its characters single', () => {
    const held = (...keys: string[]) => new Map(keys.map((key) => [key, 1]));

    it("gives the bigrams of a word of three characters one bigram's weight, but not a bigram that is a word of its own there", () => {
      expect(questionPart('路由器进水了保修吗？', held('路由', '由器', '进水', '保修')).terms.get('路由')).toBe(0.25);
      expect(questionPart('保修期还保修吗？', held('保修', '修期', '还保')).terms.get('保修')).toBe(0.5);
    });

    it("drops the characters of a word the sentences hold by its bigrams, not the same characters of the question's other words", () => {
      const characters = questionPart('路由器摔坏了保修吗？', held('路由', '由器', '保修')).characters;
      expect([...characters].filter((character) => '路由器'.includes(character))).toEqual([]);
      expect(characters).toContain('摔');
      expect(questionPart('路由器和机器', held('路由', '由器')).characters).toContain('器');
    });

    it('looks for it in other words only where the sentences do not hold it', () => {
      expect(questionPart('定做的东西能退吗？', held('东西')).pivotWords).toContain('定做');
      expect(questionPart('路由器进水了保修吗？', held('路由', '由器')).pivotWords).not.toContain('路由器');
    });
  });
});
