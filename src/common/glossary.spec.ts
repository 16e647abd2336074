import { jest } from '@jest/globals';
import {
  chineseWordsByEnglishKey,
  chineseWordsOf,
  englishKeysOf,
  englishWordsOf,
  englishWordsOfCharacter,
  holdsEnglishWord,
  holdsTranslation,
  keysOfAnotherWordFor,
  loadGlossary,
  translateForSearch,
  translatedKeys,
  translationsForSearch,
} from './glossary.js';
import { tokenize } from './text.js';

describe('glossary (CC-CEDICT)', () => {
  it('gives the English keys of a Chinese word, by stem', () => {
    expect(englishKeysOf('退款')).toContain('refund');
    expect(englishKeysOf('住宿')).toEqual(expect.arrayContaining(['lodg', 'accommod']));
  });

  it('translates a word it lacks whole by its known pieces', () => {
    expect(englishKeysOf('报销单')).toEqual(englishKeysOf('报销'));
    expect(englishKeysOf('报销单')).toContain('reimburs');
  });

  it('does not translate words that ask, single characters or Latin words', () => {
    expect(englishKeysOf('多久')).toEqual([]);
    expect(englishKeysOf('什么')).toEqual([]);
    expect(englishKeysOf('灯')).toEqual([]);
    expect(englishKeysOf('router')).toEqual([]);
  });

  it('gives the Chinese words an English word names, alone or as the head of two', () => {
    expect(chineseWordsOf('refund')).toContain('退款');
    expect(chineseWordsOf('Refunds')).toContain('退款');
    expect(chineseWordsOf('warranty')).toContain('保修');
  });

  it('reads no gloss that names something by a hyphenated proper name: 开机 ("to press Ctrl-Alt-Delete") is not "press"', () => {
    expect(englishKeysOf('开机')).toEqual(expect.arrayContaining(['start', 'boot']));
    expect(englishKeysOf('开机')).not.toEqual(expect.arrayContaining(['press']));
    expect(englishKeysOf('开机')).not.toEqual(expect.arrayContaining(['ctrl']));
    // A later, rarer gloss does not take its place ("to begin shooting a film or TV show").
    expect(englishKeysOf('开机')).not.toEqual(expect.arrayContaining(['film']));
    // A gloss with a capital that is no hyphenated name keeps its words ("to connect to the Internet", "traditional Chinese medicine").
    expect(englishKeysOf('上网')).toContain('internet');
    expect(englishKeysOf('中药')).toContain('medicin');
  });

  it('reads no negated gloss as naming its words: 不准 ("not to allow") is not "allow", 不错 ("not bad") is not "bad"', () => {
    expect(englishKeysOf('不准')).not.toContain('allow');
    expect(englishKeysOf('不准')).toContain('forbid');
    expect(englishKeysOf('不错')).not.toContain('bad');
    expect(chineseWordsOf('allow')).not.toEqual(expect.arrayContaining(['不准']));
    expect(chineseWordsOf('allow')).not.toEqual(expect.arrayContaining(['不许']));
    expect(chineseWordsOf('allow')).toContain('允许');
    // Any "n't" ("hasn't ever" is no "ever"); a negation in an aside negates nothing ("alone (without company)").
    expect(englishKeysOf('未曾')).not.toContain('ever');
    expect(englishWordsOf('一个人')).toContain('alone');
  });

  it('finds an English word in Chinese text by its own translations where it has them, as running text writes them', () => {
    const holds = (text: string, word: string) => holdsEnglishWord(text, translatedKeys(tokenize(text)), word);
    // "allowance" is no "allow" (准许, 许可 name "allow" in CC-CEDICT), but 津贴 is one.
    for (const text of ['经理准许后方可退货。', '软件许可不支持退货。']) expect(holds(text, 'allowance')).toBe(false);
    expect(holds('出差期间每日有伙食津贴。', 'allowance')).toBe(true);
    expect(holds('未拆封的商品允许七天内退货。', 'allow')).toBe(true);
    // An adjective's or adverb's translation without its 的 or 地 (合理的, 完全地): text writes 价格合理, 完全免费.
    expect(holds('价格很合理。', 'reasonable')).toBe(true);
    expect(holds('维修完全免费。', 'completely')).toBe(true);
    expect(holds('维修成功后寄回。', 'successful')).toBe(true);
  });

  it('translates the key words of a search, each once, in order', () => {
    const english = translateForSearch(['酒店', '住宿', '酒店']);
    expect(english).toEqual(expect.arrayContaining(['hotel', 'lodging']));
    expect(new Set(english).size).toBe(english.length);
    expect(english.indexOf('hotel')).toBeLessThan(english.indexOf('lodging'));
    expect(translateForSearch(['refund'])).toContain('退款');
    expect(translateForSearch(['X1', '2024'])).toEqual([]);
  });

  it("keeps, of at most so many translations, every word's first before any word's second", () => {
    const [general, invoice] = translationsForSearch(['general', 'invoice']);
    expect(general.length).toBeGreaterThan(4);
    const kept = translateForSearch(['general', 'invoice'], 4);
    expect(kept).toHaveLength(4);
    expect(kept).toContain(invoice[0]);
    expect(kept.indexOf(general[0])).toBeLessThan(kept.indexOf(invoice[0]));
  });

  it('collects the English keys of the Chinese tokens of a text', () => {
    expect(translatedKeys(['退款', 'x1', '工作日'])).toEqual(new Set([...englishKeysOf('退款'), ...englishKeysOf('工作日')]));
  });
});

describe('glossary (ECDICT)', () => {
  it('gives an English word the translations CC-CEDICT has no gloss for', () => {
    expect(chineseWordsOf('affect')).toContain('影响');
    expect(chineseWordsOf('affects')).toContain('影响');
    expect(chineseWordsOf('fault')).toContain('故障');
    expect(chineseWordsOf('yuan')).toContain('元');
  });

  it('maps a Chinese word back to the English words it first translates, but not a word that asks', () => {
    expect(englishWordsOf('影响')).toContain('affect');
    expect(englishKeysOf('什么')).toEqual([]);
  });

  it('adds nothing to the words glosses are read without ("get", "take")', () => {
    expect(chineseWordsOf('get')).not.toContain('获得');
  });

  it('finds a translation of one character only as a unit after a number', () => {
    expect(holdsTranslation('100 积分可以抵扣 1 元。', '元')).toBe(true);
    expect(holdsTranslation('自签收之日起 30 天内', '天')).toBe(true);
    expect(holdsTranslation('三个月', '月')).toBe(true);
    expect(holdsTranslation('路由器类产品（包括 Aurora X1）整机保修两年。', '包')).toBe(false);
    // The segmenter leaves 路|由|器 single: no character of it is a word of its own ("road" → 路).
    expect(holdsTranslation('路由器类产品整机保修两年。', '路')).toBe(false);
    expect(holdsTranslation('优惠券不予退还。', '优惠券')).toBe(true);
  });

  it('reads, of the words that share a stem, the commonest, and none that shares the stem of a function word', () => {
    expect(chineseWordsOf('using')).not.toContain('我们');
    expect(chineseWordsOf('taking')).not.toContain('迷人的');
    expect(chineseWordsOf('accounts')).not.toContain('会计师');
  });

  it('translates a word ECDICT has by its own translations where another word is read for its stem ("receiver" beside "receive")', () => {
    expect(chineseWordsOf('receiver')).toContain('接收器');
    expect(chineseWordsOf('receiver')).not.toContain('得到');
    expect(chineseWordsOf('receive')).toContain('收到');
  });

  it('reads a verb\'s gloss of two words by its verb, not by its last word ("to prescribe medicine": 下药)', () => {
    expect(chineseWordsOf('prescribe')).toContain('下药');
    expect(chineseWordsOf('medicine')).not.toContain('下药');
    // Not a gloss that opens with a light verb or an adverb: its first word left is no verb of its own.
    expect(chineseWordsOf('high')).not.toContain('发热'); // "to have a high temperature"
    expect(chineseWordsOf('test')).not.toContain('代考'); // "to take a test for sb"
    expect(chineseWordsOf('clearly')).not.toContain('注明'); // "to clearly indicate"
  });
});

describe('glossary (characters)', () => {
  it('gives a character the English words of its first glosses, not of a name it is read as (金: "gold", not "Jin dynasty")', () => {
    expect(englishWordsOfCharacter('钱')).toContain('money');
    expect(englishWordsOfCharacter('金')).toContain('gold');
    expect(englishWordsOfCharacter('金')).not.toContain('dynasty');
    expect(englishWordsOfCharacter('保')).not.toContain('bulgaria');
  });

  it('keeps the senses ECDICT translates back with the character, not a rare reading listed first (卡: "card", not "to block")', () => {
    expect(englishWordsOfCharacter('卡')).toContain('card');
    expect(englishWordsOfCharacter('卡')).not.toContain('block');
    expect(englishWordsOfCharacter('号')).not.toContain('roar');
    expect(englishWordsOfCharacter('当')).not.toContain('dong');
  });

  it('reads a word’s sense in computing of one word wherever its gloss stands (应用: "app", on its fourth line)', () => {
    expect(englishWordsOf('应用')).toContain('app');
    // Not one of more words, read apart: 前台's "(computing) front-end" is no "end".
    expect(englishWordsOf('前台')).not.toContain('end');
  });
});

describe('another Chinese word for a Chinese word', () => {
  it('reads the object a verb\'s gloss gives in parentheses, after its own words ("to drink (alcohol)"), not a field or a preposition', () => {
    expect(englishWordsOf('喝酒')).toEqual(['drink', 'alcohol']);
    expect(englishWordsOf('抽烟')).toContain('tobacco');
    expect(englishWordsOf('提取')).toEqual(expect.arrayContaining(['withdraw', 'money']));
    expect(englishWordsOf('提取').indexOf('money')).toBeGreaterThan(englishWordsOf('提取').indexOf('extract'));
    // "to associate (with)", "to hibernate (computing)": no object.
    expect(englishWordsOf('交往')).not.toContain('with');
    expect(englishWordsOf('休眠')).not.toContain('computing');
  });

  it('is one of the same English translation that shares a character with it (进水 for 泡水: "water")', () => {
    expect(keysOfAnotherWordFor('泡水', chineseWordsByEnglishKey(['进水', '自来水']))).toEqual(['water']);
    // 浸湿 shares "soak" and no character with 泡水; 泡水 itself is no other word for it.
    expect(keysOfAnotherWordFor('泡水', chineseWordsByEnglishKey(['泡水', '浸湿']))).toEqual([]);
  });

  it('is not found by an English function word the two translations share (以上 and 以下: "that")', () => {
    expect(keysOfAnotherWordFor('以上', chineseWordsByEnglishKey(['以下']))).not.toContain('that');
  });
});

describe('the glossary on hostile input', () => {
  it('cuts a run of thousands of characters into pieces with lookups linear in its length (no piece longer than a glossary word)', () => {
    const { englishOf } = loadGlossary();
    const lookups = jest.spyOn(englishOf, 'has');
    try {
      // One "word" of 2 000 characters that no entry holds: before, every start and end of it was looked up (about 2 million).
      expect(translationsForSearch(['㐀'.repeat(2000)])).toEqual([]);
      expect(lookups.mock.calls.length).toBeLessThan(2000 * 13);
      // Not Chinese and not an English word: nothing to look up.
      lookups.mockClear();
      expect(translationsForSearch(['é'.repeat(2000)])).toEqual([]);
      expect(lookups).not.toHaveBeenCalled();
      expect(translationsForSearch(['路由器'.repeat(3)])).toHaveLength(3);
    } finally {
      lookups.mockRestore();
    }
  });
});
