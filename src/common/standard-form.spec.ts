import { standardForm } from './standard-form.js';

describe('standardForm', () => {
  it('writes traditional characters as simplified ones', () => {
    expect(standardForm('會員積分多久會過期？')).toBe('会员积分多久会过期？');
  });

  it("reads Taiwan's and Hong Kong's words as the mainland's", () => {
    expect(standardForm('路由器韌體什麼時候更新？')).toBe('路由器固件什么时候更新？');
    expect(standardForm('數據機')).toBe('调制解调器');
    expect(standardForm('衞生處')).toBe('卫生处');
  });

  it('writes full-width letters and digits in half width, and keeps full-width punctuation', () => {
    expect(standardForm('Ｘ１ 的保修期多长？')).toBe('X1 的保修期多长？');
    expect(standardForm('ａｂｃ，１２３！')).toBe('abc，123！');
  });

  it('leaves simplified Chinese and English as they are', () => {
    const text = '积分自获得之日起 12 个月内有效，过期自动清零。干净的著作后面。The Aurora X1 broadcasts on 2.4 GHz.';
    expect(standardForm(text)).toBe(text);
    expect(standardForm('Connect the Aurora X1 router to your modem.')).toBe('Connect the Aurora X1 router to your modem.');
  });

  it('leaves simplified words that name something else in Taiwan as they are, and converting twice changes nothing', () => {
    for (const text of ['配置文件', '驱动程序', '序列号', '出差行程', '建立连接', '效果显著', '特么', '尼日利亚', '厄瓜多尔', '理查德']) {
      expect(standardForm(text)).toBe(text);
    }
    for (const text of ['會員積分多久會過期？', '奈及利亞的數據機', '軟體下載']) expect(standardForm(standardForm(text))).toBe(standardForm(text));
  });

  it('keeps text it cannot read (lone surrogates, NUL, direction marks)', () => {
    const text = 'a\u0000b\ud800c\u202e會';
    expect(standardForm(text)).toBe('a\u0000b\ud800c\u202e会');
  });
});
