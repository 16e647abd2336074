import { topicWords, translatedTopicWords } from './topic-words.js';

describe("a question's key words in the other language", () => {
  it('translates a word whose capital only opens the question, and leaves names and model numbers as they are', () => {
    expect(translatedTopicWords('Refund policy?').flat()).toContain('退款');
    expect(translatedTopicWords('How long is the warranty? Refund policy?').flat()).toContain('退款');
    const words = translatedTopicWords('Is the X1 warranty longer than the GHz rating?');
    expect(words.flat()).toContain('保修');
    expect(words.flat().some((word) => /x1|ghz/i.test(word))).toBe(false);
  });

  it('leaves out the conjunctions that open a clause of time or condition ("once", "until", "unless")', () => {
    expect(topicWords('When does the refund arrive once the return is checked?')).toEqual(['refund', 'arrive', 'return', 'checked']);
    expect(topicWords('Can I cancel until the order ships, unless it is custom?')).toEqual(['cancel', 'order', 'ships', 'custom']);
  });

  it('translates nothing of a question that only asks or names', () => {
    expect(translatedTopicWords('How long?')).toEqual([]);
    expect(translatedTopicWords('X1 2024')).toEqual([]);
  });
});
