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

  it('reads decimals, thousands and Chinese decimals, and no percentage at the end of another number or word', () => {
    expect([...percentageKeys('1,000%')]).toEqual([...percentageKeys('1000 percent')]);
    expect([...percentageKeys('20.55555%')]).toEqual([...percentageKeys('20.55555 percent')]);
    expect([...percentageKeys('２０．５％')]).toEqual([...percentageKeys('20.5%')]);
    expect([...percentageKeys('百分之十五点五')]).toEqual([...percentageKeys('15.5%')]);
    expect([...percentageKeys('百分之零点五')]).toEqual([...percentageKeys('0.5%')]);
    expect([...percentageKeys('百分之零点五')]).not.toEqual([...percentageKeys('0%')]);
    for (const written of ['x1%', '1e3%', '20.55555%']) expect([...percentageKeys(written)]).not.toEqual([...percentageKeys('1%')]);
    expect(percentageKeys('x1% and 1e3%')).toEqual(new Set());
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
