import { eng, zho } from 'stopword';
import { matchKey } from './match-keys.js';

/** Verbs of the `stopword` list: light as they are, they pair a question with its answer ("how long does it take" → "takes about two minutes"). */
const VERBS = new Set(['am', 'be', 'been', 'being', 'came', 'come', 'did', 'do', 'get', 'got', 'had', 'has', 'have', 'is', 'make', 'said', 'take', 'was', 'were']);

/**
 * Prepositions, conjunctions and negations the `stopword` list lacks ("per day", "within 30 days", "though", "not"):
 * they join or deny, as its "under" and "never" do; a negation is read by the local model's answer kinds instead
 * (local-answer-kinds). Not those of place that name where ("inside", "behind", "near"), nor those whose stem other
 * words share ("except" of "exception", "unlike" of "unlikely").
 */
const FUNCTION_WORDS_THE_LIST_LACKS =
  'per within without during across along among amid toward towards upon beside besides despite onto via versus throughout whereas although though whenever wherever not no nor cannot'.split(
    ' ',
  );

/**
 * Chinese words that join or point as English function words do: time and place relations (以后 "after", 之间
 * "between", 以内 "within"), limits (最多 "at most", 至少 "at least"), conjunctions, and 才能 as a question says it
 * (才能用: "only then can it be used", not the noun "talent"). Counted as a word, 最多 put "…单笔订单最多抵扣…" first
 * for "X2 的节点之间最多能隔多远？".
 */
const CHINESE_FUNCTION_WORDS = (
  '以后 之后 以前 之前 之间 以内 之内 以上 以下 以外 之外 期间 最多 至多 最少 至少 所有 每个 一些 这些 那些 其他 其它 ' +
  '因为 所以 但是 如果 或者 并且 而且 以及 然后 已经 还是 才能 的话'
).split(' ');

/**
 * English function words by match key: the `stopword` package's list without
 * its verbs of being, having, doing, getting, making and taking (its modals
 * stay: "could", "must"), so "under", "like", "most", "their"…, the conjunctions that
 * open a clause of time ("until", "once"), FUNCTION_WORDS_THE_LIST_LACKS, and CHINESE_FUNCTION_WORDS. `tokenize` keeps most of them,
 * since a search may need them; the offline components that weigh a
 * question's words against a sentence count them for little.
 */
const FUNCTION_WORD_KEYS = new Set(
  [...eng.filter((word) => !VERBS.has(word)), 'until', 'till', 'once', 'unless', 'whether', ...FUNCTION_WORDS_THE_LIST_LACKS, ...CHINESE_FUNCTION_WORDS].map((word) =>
    matchKey(word),
  ),
);

/** Whether a word, given as its match key (see match-keys), only joins or points ("under", "until", "their", 之间). */
export function isFunctionWordKey(key: string): boolean {
  return FUNCTION_WORD_KEYS.has(key);
}

/**
 * Chinese characters that join, point or ask when written alone (的, 把, 能, 要, 吗): the `stopword` package's Chinese
 * list, which holds the units of time too (年, 天 are read as units), and the modal verbs, prepositions and particles
 * of position it lacks. Glossed, they name nothing a sentence should hold (用: "employ").
 */
const CHINESE_FUNCTION_CHARACTERS = new Set([...zho.filter((word) => word.length === 1), ...'能要用以可出给过从被让再才也就上下里内外后前好了吗呢啊么怎为往由少带样']);

/** Whether a Chinese character written alone only joins, points or asks (see CHINESE_FUNCTION_CHARACTERS). */
export function isFunctionCharacter(character: string): boolean {
  return CHINESE_FUNCTION_CHARACTERS.has(character);
}
