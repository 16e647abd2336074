import { durationKeys, withoutDurationNumbers } from './durations.js';

const same = (a: string, b: string) => [...durationKeys(a)].some((key) => durationKeys(b).has(key));

describe('durationKeys', () => {
  it('gives one key to a span however it is said, in English or Chinese', () => {
    expect(same('for a year', '12 个月内有效')).toBe(true);
    expect(same('一年后', 'twelve months')).toBe(true);
    expect(same('within a month of delivery', '30 天内')).toBe(true);
    expect(same('半个月内', '15 days')).toBe(true);
    expect(same('两周', 'at least 14 days before departure')).toBe(true);
    expect(same('三十天', 'thirty days')).toBe(true);
    expect(same('half an hour', '30 分钟')).toBe(true);
    expect(same('a two-year warranty', '保修两年')).toBe(true);
  });

  it('tells different spans apart', () => {
    expect(same('a two-year warranty', 'a one-year warranty')).toBe(false);
    expect(same('15 天内', '14 days')).toBe(false);
    expect(same('5 seconds', '5 minutes')).toBe(false);
  });

  it('reads no span in a date, a rate or a word without a number', () => {
    expect(durationKeys('1 月 5 日').size).toBe(0);
    expect(durationKeys('60 USD per day').size).toBe(0);
    expect(durationKeys('年度累计消费，生日当月，自获得之日起').size).toBe(0);
    expect(durationKeys('5 个工作日内').size).toBe(0);
  });

  it('takes hostile text without throwing', () => {
    expect(() => durationKeys(`\u0000${'９'.repeat(10_000)} 天 \ud800 ${'一'.repeat(100_000)}年`)).not.toThrow();
  });
});

describe('withoutDurationNumbers', () => {
  it('keeps the unit and drops the number of a span, and leaves a date as it is', () => {
    expect(withoutDurationNumbers('积分自获得之日起 12 个月内有效')).toBe('积分自获得之日起 月内有效');
    expect(withoutDurationNumbers('a two-year warranty')).toBe('a year warranty');
    expect(withoutDurationNumbers('1 月 5 日发货')).toBe('1 月 5 日发货');
  });
});
