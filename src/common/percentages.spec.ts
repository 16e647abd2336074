import { percentageKeys, withoutPercentages } from './percentages.js';

describe('percentages', () => {
  it('gives one key for a percentage however it is written', () => {
    const key = [...percentageKeys('20%')];
    expect(key).toHaveLength(1);
    for (const written of ['20 %', 'a 20 percent discount', '20 per cent', '百分之二十', '百分之20', '２０％', '最多抵扣订单金额的 20%。']) {
      expect([...percentageKeys(written)]).toEqual(key);
    }
    expect([...percentageKeys('12.5%')]).not.toEqual(key);
  });

  it('reads no percentage in a number with another unit', () => {
    expect(percentageKeys('a 20 dollar taxi, 20 积分, 20 percentile')).toEqual(new Set());
  });

  it('takes the percentage out of the text, leaving other numbers', () => {
    expect(withoutPercentages('最多抵扣订单金额的 20%，满 2000 元')).not.toMatch(/\b20\b(?!00)/);
    expect(withoutPercentages('最多抵扣订单金额的 20%，满 2000 元')).toContain('2000 元');
    expect(withoutPercentages('20 percent off')).toBe('  off');
  });
});
