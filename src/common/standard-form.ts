import { Converter } from 'opencc-js/t2cn';
import { loadGlossary } from './glossary-data.js';

/**
 * One written form for text that is read for its meaning (a question, the sentences answering it): Chinese in
 * simplified characters with mainland terms, Latin letters and digits in half width. Users write in traditional
 * characters (會員積分), with Taiwan's or Hong Kong's words (韌體 for 固件, 數據機 for 调制解调器), or type a model name in full
 * width (Ｘ１); the documents and the glossary are written the other way.
 */

// OpenCC's conversions: Taiwan's characters and phrases first (a phrase is matched in traditional characters), then
// Hong Kong's variant characters that Taiwan's table leaves (衞).
const fromTaiwan = Converter({ from: 'twp', to: 'cn' });
const fromHongKong = Converter({ from: 'hk', to: 'cn' });

/** Text without a Han character or a full-width letter or digit is in the standard form already. */
const CONVERTIBLE = /[\u3400-\u9fff\uf900-\ufaff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/;
const FULL_WIDTH_ALPHANUMERIC = /[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/g;
/** Full-width forms sit at a fixed distance from ASCII. */
const FULL_WIDTH_OFFSET = 0xfee0;
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/g;

/**
 * The text in the standard form (see above); its punctuation, full-width or not, is left as written. Only a run of
 * Chinese characters with one that simplified Chinese never writes (會, 韌) is converted: OpenCC's tables would also
 * read simplified words as Taiwan's (程序 as a process, 文件 as a document; 著 of 显著, 么), and change them. Converting
 * again changes nothing.
 */
export function standardForm(text: string): string {
  if (!CONVERTIBLE.test(text)) return text;
  const { simplifiedCharacters } = loadGlossary();
  const halfWidth = text.replace(FULL_WIDTH_ALPHANUMERIC, (c) => String.fromCharCode(c.charCodeAt(0) - FULL_WIDTH_OFFSET));
  return halfWidth.replace(HAN_RUN, (run) => {
    for (const character of run) if (!simplifiedCharacters.has(character)) return fromHongKong(fromTaiwan(run));
    return run;
  });
}
