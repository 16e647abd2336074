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

  it('keeps one part for a question that asks one thing', () => {
    expect(questionParts('  会员积分多久过期？ ')).toEqual(['会员积分多久过期？']);
    expect(questionParts('')).toEqual(['']);
  });
});
