import { unitsOfNumbers } from './bilingual-units.js';

const read = (text: string) => Object.fromEntries([...unitsOfNumbers(text)].map(([number, units]) => [number, [...units].sort()]));

describe('unitsOfNumbers', () => {
  it('reads the unit each number is counted in, in either language', () => {
    expect(read('我攒了 5000 积分')).toEqual({ '5000': ['point'] });
    expect(read('满 5000 元升级为金卡会员')).toEqual({ '5000': ['money'] });
    expect(read('100积分可以抵扣 1 元')).toEqual({ '100': ['point'], '1': ['money'] });
    expect(read('The 2.4 GHz band and the 5 GHz band')).toEqual({ '2.4': ['gigahertz'], '5': ['gigahertz'] });
    expect(read('between 2 a.m. and 4 a.m.')).toEqual({ '2': ['clock'], '4': ['clock'] });
    expect(read('5 个工作日内, 12 个月内, 20%')).toEqual({ '5': ['day'], '12': ['month'], '20': ['percent'] });
  });

  it('reads a number written against Chinese characters, as Chinese is written', () => {
    expect(read('我攒了5000积分')).toEqual({ '5000': ['point'] });
    expect(read('满5000元升级')).toEqual({ '5000': ['money'] });
    expect(read('保修12个月')).toEqual({ '12': ['month'] });
    // Not a number within a name or a longer number.
    expect(read('x1 and v2.4.1')).toEqual({});
  });

  it('reads money as one unit, whatever its currency: 块 and 元 name the local one', () => {
    expect(read('above 25 USD, a $30 taxi, 25 块, 30 美元, ¥40, 50 日元')).toEqual({ '25': ['money'], '30': ['money'], '40': ['money'], '50': ['money'] });
  });

  it('reads no unit where its spelling begins a longer word, and the unit a longer spelling names', () => {
    expect(read('3 天津 5 日本 10 点击 1 元旦 5 dayspring 10 pointers')).toEqual({ '3': [''], '5': [''], '10': [''], '1': [''] });
    expect(read('2 周年, 3 周岁, 10 点积分, 8 点钟')).toEqual({ '2': ['year'], '3': ['year'], '10': ['point'], '8': ['clock'] });
  });

  it('gives a number written without a unit the unit "", and a number written both ways both', () => {
    expect(read('three mesh nodes, 3 nodes in all, 3 years')).toEqual({ '3': ['', 'year'] });
  });

  it('reads hostile text: a control character between a number and its unit leaves the unit unread', () => {
    expect(read('\u0000 12\u202e 积分 \ud800')).toEqual({ '12': [''] });
    expect(read('\u0000 12 积分 \ud800')).toEqual({ '12': ['point'] });
    expect(read('$'.repeat(10_000) + '¥'.repeat(10_000))).toEqual({});
  });
});
