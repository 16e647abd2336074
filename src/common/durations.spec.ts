import { durationKeys, withoutDurationNumbers } from './durations.js';

const same = (a: string, b: string) => [...durationKeys(a)].some((key) => durationKeys(b).has(key));

describe('durationKeys', () => {
  it('gives one key to a span however it is said, in English or Chinese', () => {
    expect(same('for a year', '12 个月内有效')).toBe(true);
    expect(same('一年后', 'twelve months')).toBe(true);
    expect(same('365 days', 'a year')).toBe(true);
    expect(same('within a month of delivery', '30 天内')).toBe(true);
    expect(same('半个月内', '15 days')).toBe(true);
    expect(same('半月内', '15 天')).toBe(true);
    expect(same('两周', 'at least 14 days before departure')).toBe(true);
    expect(same('三十天', 'thirty days')).toBe(true);
    expect(same('half an hour', '30 分钟')).toBe(true);
    expect(same('a two-year warranty', '保修两年')).toBe(true);
    expect(same('one and a half years', '一年半')).toBe(true);
    expect(same('a year and a half', '18 个月')).toBe(true);
    expect(same('two and a half hours', '150 minutes')).toBe(true);
    expect(same('三天半', '84 hours')).toBe(true);
    expect(same('一千二百天', '1200 days')).toBe(true);
    expect(same('１２个月', 'a year')).toBe(true);
  });

  it('gives a span one key, a year too', () => {
    expect(durationKeys('for a year').size).toBe(1);
    expect(durationKeys('保修三年').size).toBe(1);
  });

  it('tells different spans apart', () => {
    expect(same('a two-year warranty', 'a one-year warranty')).toBe(false);
    expect(same('15 天内', '14 days')).toBe(false);
    expect(same('5 seconds', '5 minutes')).toBe(false);
    expect(same('one and a half years', 'six months')).toBe(false);
    expect(same('two and a half hours', 'half an hour')).toBe(false);
  });

  it('reads no span in a date, an ordinal, a rate or a word that only starts with a number', () => {
    for (const text of [
      '1 月 5 日',
      '一月五日',
      '三月十五日',
      '2025 年',
      '第二天发货',
      '第3天',
      '一周年',
      '同一天',
      '统一年费',
      '一年级',
      '60 USD per day',
      '60 USD a day',
      '10 USD a month',
      'twice a year',
      'once a week',
      'a second router',
      '年度累计消费，生日当月，自获得之日起',
      '5 个工作日内',
    ]) {
      expect([text, durationKeys(text).size]).toEqual([text, 0]);
    }
    expect(same('8 hours a day', '8 小时')).toBe(true);
    expect(same('8 hours a day', '1 天')).toBe(false);
  });

  it('takes hostile text without throwing', () => {
    expect(() => durationKeys(`\u0000${'９'.repeat(10_000)} 天 \ud800 \u202e${'一'.repeat(100_000)}年`)).not.toThrow();
  });

  it('reads a number followed by a long run of spaces in linear time (three unbounded \\s* backtracked cubically)', () => {
    // Before, 2 000 spaces took 2.7 s; 20 000 would take hours, not the test's few seconds.
    const text = `一二三四五六${' '.repeat(20_000)}中 1${'\u3000'.repeat(20_000)}天`;
    expect(durationKeys(text).size).toBe(0);
    expect(withoutDurationNumbers(text)).toBe(text);
  });
});

describe('withoutDurationNumbers', () => {
  it('keeps the unit and drops the number of a span, and leaves a date as it is', () => {
    expect(withoutDurationNumbers('积分自获得之日起 12 个月内有效')).toBe('积分自获得之日起  月 内有效');
    expect(withoutDurationNumbers('a two-year warranty')).toBe('a  year  warranty');
    expect(withoutDurationNumbers('1 月 5 日发货')).toBe('1 月 5 日发货');
  });
});
