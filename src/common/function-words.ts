import { eng } from 'stopword';
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
 * English function words by match key: the `stopword` package's list without
 * its verbs of being, having, doing, getting, making and taking (its modals
 * stay: "could", "must"), so "under", "like", "most", "their"…, the conjunctions that
 * open a clause of time ("until", "once"), and FUNCTION_WORDS_THE_LIST_LACKS. `tokenize` keeps most of them,
 * since a search may need them; the offline components that weigh a
 * question's words against a sentence count them for little.
 */
const FUNCTION_WORD_KEYS = new Set(
  [...eng.filter((word) => !VERBS.has(word)), 'until', 'till', 'once', 'unless', 'whether', ...FUNCTION_WORDS_THE_LIST_LACKS].map((word) => matchKey(word)),
);

/** Whether an English word, given as its match key (see match-keys), only joins or points ("under", "until", "their"). */
export function isFunctionWordKey(key: string): boolean {
  return FUNCTION_WORD_KEYS.has(key);
}
