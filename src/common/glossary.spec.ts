import { jest } from '@jest/globals';
import { chineseWordsOf, englishKeysOf, loadGlossary, translateForSearch, translatedKeys, translationsForSearch } from './glossary.js';

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

  it('translates the key words of a search, each once, in order', () => {
    const english = translateForSearch(['酒店', '住宿', '酒店']);
    expect(english).toEqual(expect.arrayContaining(['hotel', 'lodging']));
    expect(new Set(english).size).toBe(english.length);
    expect(english.indexOf('hotel')).toBeLessThan(english.indexOf('lodging'));
    expect(translateForSearch(['refund'])).toContain('退款');
    expect(translateForSearch(['X1', '2024'])).toEqual([]);
  });

  it('collects the English keys of the Chinese tokens of a text', () => {
    expect(translatedKeys(['退款', 'x1', '工作日'])).toEqual(new Set([...englishKeysOf('退款'), ...englishKeysOf('工作日')]));
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
