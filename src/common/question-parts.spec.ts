import { questionParts } from './question-parts.js';

describe('questionParts', () => {
  it('cuts at question marks and at the words that join questions', () => {
    expect(questionParts('How long is the X1 warranty? Does it cover water damage?')).toEqual(['How long is the X1 warranty', 'Does it cover water damage']);
    expect(questionParts('积分多久过期，以及能不能转让？')).toEqual(['积分多久过期', '能不能转让']);
  });

  it('cuts at a comma between two clauses that each ask', () => {
    expect(questionParts('X2 的 reset 要按几秒，main node reset 了会怎样？')).toEqual(['X2 的 reset 要按几秒', 'main node reset 了会怎样']);
    expect(questionParts('How long do I hold the reset button, what happens to my settings?')).toEqual(['How long do I hold the reset button', 'what happens to my settings']);
  });

  it('keeps a clause that asks nothing with the clause it belongs to', () => {
    expect(questionParts('如果商品有质量问题，退货运费谁出？')).toEqual(['如果商品有质量问题，退货运费谁出？']);
    expect(questionParts('退货运费谁出，如果商品有质量问题？')).toEqual(['退货运费谁出，如果商品有质量问题？']);
    expect(questionParts('If my order used a coupon, do I get the coupon back when I return it?')).toEqual([
      'If my order used a coupon, do I get the coupon back when I return it?',
    ]);
    expect(questionParts('X1、X2 和 X3 的保修分别多久？')).toEqual(['X1、X2 和 X3 的保修分别多久？']);
  });

  it('does not cut at a comma before an inverted verb, a clause of concession, an indefinite question word, or a clause that names nothing', () => {
    for (const question of [
      'When I reset the router, are my settings gone?',
      'Why, when I reset the router, are my settings gone?',
      'How long, in business days, does a refund take?',
      '几乎每天都断网，怎么办？',
      '无论什么原因，退货运费谁出？',
      '哪些商品不能退，为什么？',
      '这个怎么样，好吗？',
      '你知道吗，X1 怎么重置？',
    ]) {
      expect(questionParts(question)).toEqual([question]);
    }
  });

  it('reads a question in traditional characters as one in simplified ones, and keeps its parts as written', () => {
    expect(questionParts('X2 的 reset 要按幾秒，main node reset 了會怎樣？')).toEqual(['X2 的 reset 要按幾秒', 'main node reset 了會怎樣']);
    expect(questionParts('積分多久過期，還有能不能轉讓？')).toEqual(['積分多久過期', '能不能轉讓']);
  });

  it('keeps one part for a question that asks one thing', () => {
    expect(questionParts('  会员积分多久过期？ ')).toEqual(['会员积分多久过期？']);
    expect(questionParts('')).toEqual(['']);
  });
});
