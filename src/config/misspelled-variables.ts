import { distance } from 'fastest-levenshtein';

export interface MisspelledVariable {
  /** The name as set. */
  name: string;
  /** The variable of this service it is closest to. */
  suggestion: string;
}

/** Most edits (insertions, deletions, substitutions) between a set name and the variable it is taken for. */
const MAX_EDITS = 2;
/** Shorter names are too close to too much to guess from. */
const MIN_LENGTH = 6;

/** The first word of a name (`LLM` of `LLM_PROVIDER`), upper case; undefined for one-word names (`PORT`). */
function firstWord(name: string): string | undefined {
  const cut = name.indexOf('_');
  return cut > 0 ? name.slice(0, cut).toUpperCase() : undefined;
}

/**
 * Set variables that are not this service's but look like a misspelling of
 * one: `LLM_PROVDER` for `LLM_PROVIDER`, `llm_provider` for `LLM_PROVIDER`,
 * `DATABSE_URL` for `DATABASE_URL`. Only names that look like ours are
 * considered: their first word is one of our first words (`LLM`, `DATABASE`,
 * `RAG`…), or one edit from one of at least four letters; so `HTTPS_PROXY`,
 * `npm_config_*` and the rest of a shell's environment are left alone.
 */
export function misspelledVariables(set: Iterable<string>, known: readonly string[]): MisspelledVariable[] {
  const knownNames = new Set(known);
  const ourWords = new Set(known.map(firstWord).filter((word): word is string => word !== undefined));
  const looksLikeOurs = (word: string) => ourWords.has(word) || (word.length >= 4 && [...ourWords].some((ours) => ours.length >= 4 && distance(word, ours) === 1));
  const found: MisspelledVariable[] = [];
  for (const name of set) {
    if (knownNames.has(name) || name.length < MIN_LENGTH || !/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) continue;
    const word = firstWord(name);
    if (!word || !looksLikeOurs(word)) continue;
    const upper = name.toUpperCase();
    let best: { name: string; edits: number } | undefined;
    for (const candidate of known) {
      const edits = distance(upper, candidate);
      if (edits <= MAX_EDITS && (!best || edits < best.edits)) best = { name: candidate, edits };
    }
    if (best) found.push({ name, suggestion: best.name });
  }
  return found;
}

/** The warning for one: `LLM_PROVDER: did you mean LLM_PROVIDER? …`. */
export function describeMisspelling({ name, suggestion }: MisspelledVariable, source?: string): string {
  return `${name}: did you mean ${suggestion}? ${name}${source ? ` (in ${source})` : ''} is not a setting of this service and is ignored`;
}
