import { matchKey } from './match-keys.js';
import { isFunctionWordKey } from './function-words.js';
import englishHypernyms from './data/english-hypernyms.json' with { type: 'json' };

/**
 * Broader words of English nouns, from WordNet (data/english-hypernyms.json,
 * written by scripts/build-english-hypernyms.mjs; see data/NOTICE.md): the
 * nouns one and two steps above a noun's commonest sense ("wine" → alcohol,
 * beverage; "dinner" → meal), where its stem reads as that noun and the
 * class is not so wide that it matches anything (the script says which). A
 * sentence about alcohol answers a question about wine.
 */

let broaderByKey: Map<string, ReadonlySet<string>> | null = null;
const NONE: ReadonlySet<string> = new Set();

function table(): Map<string, ReadonlySet<string>> {
  const byKey = new Map<string, Set<string>>();
  for (const [noun, broader] of Object.entries(englishHypernyms as Record<string, string[]>)) {
    const key = matchKey(noun);
    const keys = byKey.get(key) ?? byKey.set(key, new Set()).get(key)!;
    for (const word of broader) {
      const broaderKey = matchKey(word);
      if (broaderKey !== key && !isFunctionWordKey(broaderKey)) keys.add(broaderKey);
    }
  }
  return byKey;
}

/** The match keys (see match-keys) of the broader nouns of a word's match key; none for a word WordNet's common nouns do not hold. */
export function broaderKeys(key: string): ReadonlySet<string> {
  broaderByKey ??= table();
  return broaderByKey.get(key) ?? NONE;
}
