import { matchKey } from '../common/match-keys.js';
import { englishKeysOf, glossaryWordsIn } from '../common/glossary.js';
import { wordSegments } from '../common/segments.js';

/** What a question asks for beyond its terms (a duration, an amount, a condition…), and how a sentence that gives it reads: the local model's answer kinds. */

/** A question about conditions or requirements ("what do I need to…", "需要满足什么条件"): the phrase asks, it names nothing a sentence should hold. */
export const CONDITION_PHRASE =
  /\b(?:what|which) (?:are the )?(?:conditions?|requirements?|criteria)\b|\bwhat (?:do|does|must|should) (?:i|you|we|one|it|they) (?:need|have) to\b|\bwhat (?:do|does) (?:i|you|we|one|it|they) need\b|\bwhat conditions?\b|\brequirements? for\b|需要满足什么条件|要满足什么条件|满足什么条件|需要什么条件|什么条件|有什么要求|什么要求|什么样的|什么情况下|怎样才能|如何才能/i;
export const CONDITION_ASKS = new RegExp(CONDITION_PHRASE.source, 'gi');

/** A number in digits, words or Chinese numerals; a run of numerals is read from where it starts, once, not from each place in it. */
const NUMBER = String.raw`(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|sixty|ninety|hundred|half|a|(?<![一二两三四五六七八九十百千万半])[一二两三四五六七八九十百千万半]+)`;

/**
 * What something holds: "what is in the box", "X2 套装里有什么" are answered by
 * the sentence that lists it. "What is in stock", "in store", "in effect"… are
 * idioms of "in", not a question about a container.
 */
export const CONTENTS_KIND = {
  asks: /\bwhat(?:'s| is| comes?| do (?:i|you|we) get| does (?:it|one) come with)? in (?:(?:the|a|an|my|your) \p{L}+|(?!(?:stocks?|store|season|progress|effect|force|place|use|charge|common|general|fact|time|order|question|demand|fashion|style|practice|theory|person|public|private|total|case|short|detail|advance|particular|transit|scope|beta)\b)\p{L}+)|\bwhat (?:does|do) (?:it|they|\p{L}+(?: \p{L}+){0,3}) (?:contain|include|come with)\b|\bwhat (?:is|are) included\b|里(?:面)?(?:都)?有(?:什么|哪些|几)|包含(?:什么|哪些)|包括(?:什么|哪些)|含有(?:什么|哪些)/iu,
  answers: /\b(?:contains?|includes?|including|comes? with|consists? of)\b|包含|包括|含有|内含|附带/i,
};
/** The verbs of such a question ("included", "contain", 包括): they ask, they name nothing a sentence should hold. */
export const CONTENTS_VERBS = /\b(?:contains?|contained|includes?|included|including|comes? with)\b|包含|包括|含有/giu;

/**
 * The units of a span of time after a number, or after a range ("5–7 days"): what a count of things is not. With the
 * words that qualify days ("3 business days", 三个工作日) and the short forms ("10 mins", "48h").
 */
const TIME_UNIT_AFTER = String.raw`(?:\s*[-–~至到]\s*[\d一二两三四五六七八九十]+)?(?:[\s-]*(?:(?:business|calendar|working|work)\s+)?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weekdays?|weeks?|months?|years?)\b|\s*(?:个\s*)?(?:秒|分钟|小时|天|日|周|星期|月|年|工作日))`;
/** The Chinese units of a span of time after 几 or 多少 (几天, 多少周): a question that asks for a span, not a count. */
const CHINESE_TIME_UNIT = '秒|分钟|小时|天|日|周|星期|个月|月|年|工作日';
const CHINESE_NUMERAL = '一二两三四五六七八九十百千万';

/**
 * A count of things: "how many nodes", "几个房间" are answered by a number of something ("three mesh nodes", "two
 * rooms"), not by a span of time ("10 seconds", 保修一年), which answers the duration kind's "how many days", 几天.
 * A number is read whole (not from inside "x2" or "1,000"), so that a long run of digits is read in one pass.
 */
export const COUNT_KIND = {
  asks: new RegExp(String.raw`\bhow many\b(?!\s+(?:seconds|minutes|hours|days|weeks|months|years)\b)|多少(?!${CHINESE_TIME_UNIT})|几(?!${CHINESE_TIME_UNIT})`, 'i'),
  answers: new RegExp(
    String.raw`(?:(?<![\p{L}\d.,])\d+(?:[.,]\d+)*(?![\d.,])|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b|(?<![${CHINESE_NUMERAL}])[${CHINESE_NUMERAL}]+(?![${CHINESE_NUMERAL}]))(?!${TIME_UNIT_AFTER})`,
    'iu',
  ),
};

/** An amount of money. */
export const AMOUNT_KIND = {
  asks: /\bhow much\b|\bcost|\bprice|\blimit\b|\ballowance|\bfee\b|\bfees\b|\bpay\b|多少钱|费用|价格|金额|限额|额度|多少元|抵扣多少/i,
  answers: /\d[\d,.]*\s*(?:USD|EUR|GBP|CNY|RMB|dollars?|euros?|yuan|元|块)|[$€£¥]\s*\d/i,
};

/**
 * How long before something: "how far in advance", "how far ahead", 提前几天 are answered by a span before it ("at
 * least 14 days before departure", "48 hours' notice", 提前 3 天, 出发前 14 天), not by any span ("flights under six
 * hours"). "How far ahead" may also ask a distance ("how far ahead can the radar see"), which it still asks.
 */
const LEAD_TIME_KIND = {
  asks: /\bhow (?:far |long |much )?(?:ahead|in advance|beforehand)\b|\bhow much notice\b|提前(?:多久|多长时间|多少|几)/i,
  answers: new RegExp(
    String.raw`\b${NUMBER}[\s-]*(?:(?:business|calendar|working)\s+)?(?:h|hrs?|hours?|days?|weeks?|fortnights?|months?)['’]?\s+(?:before|ahead|in advance|prior|notice)\b|提前\s*${NUMBER}\s*个?\s*(?:小时|天|日|周|星期|月|工作日)|前\s*${NUMBER}\s*个?\s*(?:小时|天|日|周|星期|月|工作日)|${NUMBER}\s*个?\s*(?:小时|天|日|周|星期|月|工作日)(?:之前|以前|前)`,
    'iu',
  ),
};

/**
 * What a question asks for beyond its terms, and how a sentence that gives
 * it reads: "how long" wants a duration, "how much" an amount, "when" a time,
 * and so on. A sentence holding what the question asks for scores up to one
 * average term more (see relevance).
 */
export const ANSWER_KINDS: Array<{ asks: RegExp; answers: RegExp }> = [
  {
    // a duration or a time limit
    asks: /\bhow (?:long(?! (?:ahead|in advance|beforehand)\b)|soon|often)\b|\bhow many (?:seconds|minutes|hours|days|weeks|months|years)\b|\bdeadline|\bexpir|\bvalid (?:for|until|till)\b|\bstays? valid\b|(?<!提前)(?:多久|多长)|(?<!提前)多少(?:秒|天|年|个月|小时|分钟|周|星期|日|工作日)|(?<!提前)几(?:秒|天|年|个月|小时|分钟|周|星期|日|工作日)|期限|有效期|过期|时限/i,
    answers: new RegExp(
      String.raw`\b${NUMBER}[\s-]*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b|${NUMBER}\s*个?\s*(?:秒|分钟|小时|天|日|周|星期|月|年)|工作日`,
      'iu',
    ),
  },
  {
    // a time of day, a date or a moment
    // "when" asks only where it opens a clause: in "is it safe when the light blinks" it sets a condition.
    asks: /(?:^|[,;:]\s*)(?:and\s+|but\s+|so\s+)?when\b|\bwhat time\b|什么时候|何时|多会儿|几点|哪天/i,
    // A start ("from the date of purchase", 自签收之日起) answers "when does it start" as a moment does, and so does the
    // next of something that recurs ("paid with the next payroll", 下个月, 次日).
    answers:
      /\b\d{1,2}(?::\d{2})?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\b\d{1,2}:\d{2}\b|\d+\s*点|\b(?:midnight|noon|before|after|within|during|until|once)\b|\bfrom the (?:date|day|time|moment)\b|\b(?:as of|starting (?:on|from)|effective (?:from|on))\b|\b(?:the|its|your) next (?:payroll|payday|pay (?:period|run|cycle|date)|billing (?:cycle|period|date)|(?:business |working )?day|week|month|quarter|year|morning|evening|night|cycle|statement|invoice)\b|凌晨|上午|下午|晚上|之前|之后|以内|内|之日起|起算|起生效|(?<![按剩留])下(?:一?个)?(?:月|周|星期|工作日|季度)|下一次|下次|次日|次月/i,
  },
  LEAD_TIME_KIND,
  AMOUNT_KIND,
  COUNT_KIND,
  {
    // a share
    asks: /\bpercent|\bproportion\b|比例|百分之|几成|多少折/i,
    answers: /\d+(?:\.\d+)?\s*%|\bpercent\b|百分之/i,
  },
  {
    // a comparison: "which band is quicker" is answered by the sentence that compares ("faster", "further"), as is what
    // something is better at ("5 GHz 频段有什么优点？": "…the 5 GHz band is faster at short range")
    asks: /\b(?:advantages|strengths|more|less|better|worse|best|worst|\p{L}{2,}(?:er|est)\s+than|quicker|faster|slower|further|farther|nearer|closer|longer|shorter|cheaper|higher|lower|larger|smaller|bigger|stronger|weaker|easier|safer|quickest|fastest|slowest|furthest|farthest|cheapest|highest|lowest|largest|smallest|biggest|strongest)\b|更|最|比较|哪个.{0,4}[快慢远近好大小高低多少]|优点|优势|长处/iu,
    answers:
      /\b(?:more|less|better|worse|best|worst|\p{L}{2,}er\s+than|quicker|faster|slower|further|farther|nearer|closer|longer|shorter|cheaper|higher|lower|larger|smaller|bigger|stronger|weaker|easier|safer|quickest|fastest|slowest|furthest|farthest|cheapest|highest|lowest|largest|smallest|biggest|strongest)\b|更|最|比/iu,
  },
  {
    // who does something: the agent of a passive ("approved by your manager", "由买家承担")
    asks: /(?:^|[,;:]\s*)(?:and\s+|but\s+)?who(?:m|se)?\b|\bby whom\b|谁|哪位|什么人/i,
    answers: /\bby (?:the|your|a|an|our|their|his|her|its)\b|由/i,
  },
  {
    // a negative: "which items cannot be returned" is answered by the sentence that says what is not
    asks: /\b(?:not|cannot|never|no|without)\b|n't\b|不|没|无法|非/i,
    answers: /\b(?:not|cannot|never|no|without|neither|nor|excludes?|excluded|except)\b|n't\b|不|没|无法|非|禁止/i,
  },
  {
    // a condition or a requirement: "what do I need to…", "需要满足什么条件" are answered by the sentence that says when, if or only if
    asks: CONDITION_PHRASE,
    answers: /\b(?:if|only|unless|must|need|needs|required|requires|provided|as long as|at least|may|can|eligible|allowed)\b|如果|若|只要|只有|必须|须|需|可以|可|且|才/i,
  },
  {
    // a place: where something is, goes or is done ("under Family", "on the back", "through the company travel portal",
    // 原路退回, 在 App 里)
    // Not 在哪些情况下 or 在哪天, which ask a condition or a time.
    asks: /(?:^|[,;:]\s*)(?:and\s+|but\s+)?where\b|哪里|哪儿|什么地方|什么位置|在哪(?![些种天年]|一?个?(?:时候|情况|月))/i,
    // Not a span or an amount ("under six hours", "below 25 USD"), a state (在使用中, "under certain conditions") or a time (在一年中).
    answers:
      /\b(?:under|through|via|inside|behind|beside|below|above)\s+(?:the\s+|your\s+|a\s+)?(?!(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|hundred|half|certain|normal|no|any|some|most|all|such|these|those|this|that)\b)\p{L}|\b(?:in|on|at|into|to)\s+(?:the|your)\s+(?:app|back|front|side|top|bottom|settings?|menu|portal|website|page|store|office|account)\b|原路|通过|(?:在|到)(?![^，。；]{0,12}?(?:情况|时间|时候|期间|使用|状态|过程|\d|[一二两三四五六七八九十百千]))[^，。；]{1,12}(?:里|中|上|下)/iu,
  },
  {
    // a colour
    asks: /\bwhat colou?r\b|\bwhich colou?r\b|什么颜色|哪种颜色|颜色/i,
    answers: /\b(?:red|green|blue|amber|orange|yellow|white|black|purple|pink|grey|gray)\b|红|绿|蓝|黄|橙|白|黑|紫/i,
  },
  {
    // a temperature
    asks: /\btemperature|\bhow (?:hot|cold|warm)\b|\bdegrees?\b|温度|多少度|几度/i,
    answers: /°|℃|℉|\bdegrees?\b|\d+\s*度/i,
  },
  {
    // a distance or a size
    asks: /\bhow (?:far(?! in advance\b)|big|large|heavy|tall|wide)\b|\bdistance\b|多远|多大|多重|多高|距离/i,
    answers: new RegExp(
      String.raw`\d+(?:\.\d+)?\s*(?:mm|cm|m|km|metres?|meters?|feet|ft|inch(?:es)?|kg|g|lbs?)\b|\d+(?:\.\d+)?\s*(?:米|厘米|公里|公斤|克)|\b${NUMBER}\s+\p{L}+\s+(?:away|apart)\b`,
      'iu',
    ),
  },
  CONTENTS_KIND,
];

/** How a sentence that gives what a question asks for reads (see ANSWER_KINDS). */
export interface AnswerTest {
  test(text: string): boolean;
}

/** "What app do I…", "Which cable should I…": the noun a question asks which one of, before its verb. */
const WHICH_NOUN =
  /\b(?:what|which)\s+(?:kind of\s+|type of\s+|sort of\s+)?(\p{L}[\p{L}-]*)\s+(?:do|does|did|should|can|could|is|are|was|were|will|would|must|may|might|has|have)\b/iu;
/**
 * What follows "what" or "which" and is no thing to name one of: what another kind reads (a time, a colour), a way,
 * "one", and words that qualify the question ("what else", "what exactly").
 */
const NOT_NAMED_THINGS = new Set(
  'time times colour color colours colors way ways one ones else exactly day days date dates year years month months hour hours much many kind type sort'.split(' '),
);
/** Words that open a noun phrase with a capital without naming it, as after a comma in a title ("…, The app"). */
const CAPITALISED_DETERMINERS = new Set(['any', 'the', 'this', 'that', 'these', 'those', 'each', 'every', 'all', 'some', 'no', 'a', 'an', 'your', 'our', 'its', 'their', 'my']);
/**
 * A name, then the word after it: a word with a capital ("Aurora", "Ethernet"), one with a capital after a small
 * letter or two ("iOS", "eBay"), or a number with its unit ("2.4 GHz"). It is read whole, from where it starts, so that a
 * long run of capitals or digits is read once; the word after it is looked at, not taken, so that names in a row are
 * each read ("the blue Ethernet cable").
 */
const NAME_THEN_WORD = /(?<![\p{L}\d.-])(\p{Lu}[\p{L}\d-]*|\p{Ll}{1,2}\p{Lu}[\p{L}\d-]*|\d[\d.]*\s*\p{Lu}\p{L}*)(?=\s+(\p{L}+))/gu;
/** What may stand before a name in running text: a word, a number, a comma, a quote or a bracket closing; not a colon, a dash or a bullet that opens a line. */
const BEFORE_A_NAME = /[\p{L}\d,'"’”)]$/u;

/**
 * Which one of something: "What app do I download…?" is answered by the sentence that names one ("Open the Aurora
 * app…"): the noun, by its match key, after a name or a model ("Aurora app", "Ethernet cable", "5 GHz band"), not
 * "the app" alone. A capital that opens the sentence or follows a colon or a bullet ("Unused items can…", "Note: Power
 * cable damage…") names nothing; so a name that opens a sentence ("Aurora app is free.") is not read as one.
 */
export function namedInstanceKind(question: string): AnswerTest | undefined {
  const keys = askedNounKeys(question);
  if (keys.length === 0) return undefined;
  return {
    test: (text: string) =>
      [...text.matchAll(NAME_THEN_WORD)].some(
        (match) =>
          keys.includes(matchKey(match[2].toLowerCase())) && !CAPITALISED_DETERMINERS.has(match[1].toLowerCase()) && BEFORE_A_NAME.test(text.slice(0, match.index).trimEnd()),
      ),
  };
}

/**
 * 哪个 (哪种, 哪款) or 什么 before a noun: "用哪个应用" asks which app, as "what app do I" does. Not 哪些, which asks for
 * several: the sentence that lists them ("broadcasts on 2.4 GHz and 5 GHz") need not say the noun.
 */
const CHINESE_WHICH_NOUN = /(?:哪(?:个|种|款|一个)|(?<!为)什么(?!时候))(\p{Script=Han}{2,})/u;
/** The longest noun read after 哪个 or 什么: a question's nouns are short, and the run after them may be the whole message. */
const LONGEST_CHINESE_NOUN = 8;
/** NOT_NAMED_THINGS by match key, for the translations of a Chinese noun (颜色: "color", 时间: "time"). */
const NOT_NAMED_KEYS = new Set([...NOT_NAMED_THINGS].map(matchKey));

/**
 * The match keys of the noun a question asks which one of: as written in English; in Chinese by its translations
 * (应用: "app"…), the noun the glossary knows at the start of what follows 哪个 (频段 of 频|段), else the segmenter's
 * first word there; none for what another kind reads (什么颜色, 什么时间).
 */
function askedNounKeys(question: string): readonly string[] {
  const noun = WHICH_NOUN.exec(question)?.[1]?.toLowerCase();
  if (noun) return noun.length < 2 || CAPITALISED_DETERMINERS.has(noun) || NOT_NAMED_THINGS.has(noun) ? [] : [matchKey(noun)];
  const after = CHINESE_WHICH_NOUN.exec(question)?.[1].slice(0, LONGEST_CHINESE_NOUN);
  if (!after) return [];
  const known = glossaryWordsIn(after)[0];
  const word = known?.start === 0 ? known.word : ([...wordSegments(after)][0]?.segment ?? '');
  const keys = word.length >= 2 ? englishKeysOf(word) : [];
  return keys.some((key) => NOT_NAMED_KEYS.has(key)) ? [] : keys;
}
