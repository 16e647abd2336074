import { unitsOfNumbers } from './bilingual-units.js';

const read = (text: string) => Object.fromEntries([...unitsOfNumbers(text)].map(([number, units]) => [number, [...units].sort()]));

describe('unitsOfNumbers', () => {
  it('reads the unit each number is counted in, in either language', () => {
    expect(read('我攒了 5000 积分')).toEqual({ '5000': ['point'] });
    expect(read('满 5000 元升级为金卡会员')).toEqual({ '5000': ['yuan'] });
    expect(read('100积分可以抵扣 1 元')).toEqual({ '100': ['point'], '1': ['yuan'] });
    expect(read('The 2.4 GHz band and the 5 GHz band')).toEqual({ '2.4': ['gigahertz'], '5': ['gigahertz'] });
    expect(read('receipts for every item above 25 USD, a $30 taxi')).toEqual({ '25': ['dollar'], '30': ['dollar'] });
    expect(read('between 2 a.m. and 4 a.m.')).toEqual({ '2': ['clock'], '4': ['clock'] });
    expect(read('5 个工作日内, 12 个月内, 20%')).toEqual({ '5': ['day'], '12': ['month'], '20': ['percent'] });
  });

  it('gives a number written without a unit the unit "", and a number written both ways both', () => {
    expect(read('three mesh nodes, 3 nodes in all, 3 years')).toEqual({ '3': ['', 'year'] });
    // A word that only begins like a unit is none ("5 dayspring", "10 pointers").
    expect(read('5 dayspring 10 pointers')).toEqual({ '5': [''], '10': [''] });
  });

  it('reads hostile text, a number with a control character before its unit as written without one', () => {
    expect(read('\u0000 12\u202e 积分 \ud800')).toEqual({ '12': [''] });
    expect(read('\u0000 12 积分 \ud800')).toEqual({ '12': ['point'] });
    expect(read('x'.repeat(100_000))).toEqual({});
  });
});
