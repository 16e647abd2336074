import { Converter } from 'opencc-js/t2cn';
import { loadGlossary } from './glossary-data.js';
import { HAN } from './segments.js';

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

const FULL_WIDTH_ALPHANUMERIC = /[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/g;
/** Text without a Han character or a full-width letter or digit is in the standard form already. */
const CONVERTIBLE = new RegExp(`${HAN.source}|${FULL_WIDTH_ALPHANUMERIC.source}`);
/** Full-width forms sit at a fixed distance from ASCII. */
const FULL_WIDTH_OFFSET = 0xfee0;
const HAN_RUN = new RegExp(`${HAN.source}+`, 'g');

// The rerank, the grading and the answers read the same passages in a turn, and the same chunks come back turn after
// turn: each text is converted once, within a bound.
const FORMS_KEPT = 2_000;
const forms = new Map<string, string>();

/**
 * The text in the standard form (see above); its punctuation, full-width or not, is left as written. Only a run of
 * Chinese characters with one that simplified Chinese never writes (會, 韌) is converted: OpenCC's tables would also
 * read simplified words as Taiwan's (程序 as a process, 文件 as a document; 著 of 显著, 么), and change them. Converting
 * again changes nothing.
 */
export function standardForm(text: string): string {
  if (!CONVERTIBLE.test(text)) return text;
  let form = forms.get(text);
  if (form === undefined) {
    if (forms.size >= FORMS_KEPT) forms.clear();
    form = converted(text);
    forms.set(text, form);
  }
  return form;
}

function converted(text: string): string {
  const { simplifiedCharacters } = loadGlossary();
  const halfWidth = text.replace(FULL_WIDTH_ALPHANUMERIC, (c) => String.fromCharCode(c.charCodeAt(0) - FULL_WIDTH_OFFSET));
  return halfWidth.replace(HAN_RUN, (run) => {
    for (const character of run) if (!simplifiedCharacters.has(character)) return fromHongKong(fromTaiwan(run));
    return run;
  });
}
