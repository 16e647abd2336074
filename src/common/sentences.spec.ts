import { sentencesOf } from './sentences.js';

describe('sentences in Chinese and English', () => {
  it('does not end a sentence at an abbreviation, a decimal or a time', () => {
    expect(sentencesOf('Firmware updates install automatically between 2 a.m. and 4 a.m. local time. You can also check for updates manually.')).toEqual([
      'Firmware updates install automatically between 2 a.m. and 4 a.m. local time.',
      'You can also check for updates manually.',
    ]);
    expect(sentencesOf('The Aurora X1 broadcasts on 2.4 GHz and 5 GHz. Updates start at 10:30 p.m. The router restarts.')).toEqual([
      'The Aurora X1 broadcasts on 2.4 GHz and 5 GHz.',
      'Updates start at 10:30 p.m.',
      'The router restarts.',
    ]);
    expect(sentencesOf('Use a thin tool, e.g. A paper clip, for the pinhole. Ask Dr. Lee in room No. 5 first. Bring cables, adapters, etc. Then go.')).toEqual([
      'Use a thin tool, e.g. A paper clip, for the pinhole.',
      'Ask Dr. Lee in room No. 5 first.',
      'Bring cables, adapters, etc.',
      'Then go.',
    ]);
  });

  it('ends Chinese sentences at 。！？ but not at a semicolon, and every sentence at a line break', () => {
    expect(sentencesOf('退货运费由买家承担；如果商品存在质量问题，运费由我们承担。保修期内可免费维修！真的吗？是的')).toEqual([
      '退货运费由买家承担；如果商品存在质量问题，运费由我们承担。',
      '保修期内可免费维修！',
      '真的吗？',
      '是的',
    ]);
    expect(sentencesOf('Unplug the router\nWait for e.g.\nPlug it back in')).toEqual(['Unplug the router', 'Wait for e.g.', 'Plug it back in']);
    expect(sentencesOf('The 2.4 GHz band reaches further through walls; the 5 GHz band is faster at short range.')).toHaveLength(1);
  });
});
