import { matchKeys, wordKeys } from '../common/match-keys.js';
import { translatedKeys } from '../common/glossary.js';
import { chineseCharacters, containsCjk } from '../common/text.js';
import { durationKeys } from '../common/durations.js';
import { percentageKeys, withoutPercentages } from '../common/percentages.js';
import { phrasalVerbs, phraseKeys } from '../common/phrases.js';
import { standardForm } from '../common/standard-form.js';
import { passageSentencesWithHeadings } from './local-passage-text.js';

/**
 * The sentences the offline model answers from (see local-compose): each
 * sentence of the tool's passages once, with the keys it is compared by.
 */

export interface Passage {
  source: string;
  page?: number | null;
  text: string;
}

export interface Candidate {
  text: string;
  /** Written in Chinese (else in English). */
  chinese: boolean;
  passage: Passage;
  /** The passage's place in the retrieval's ranking. */
  rank: number;
  /** Document order: the passage's rank, then the sentence's place in it. */
  order: number;
  keys: Set<string>;
  /** The English keys its Chinese words translate to (see common/glossary), for an English question. */
  translatedKeys: Set<string>;
  /** The keys of the headings above it in its passage and of its document's name. */
  headingKeys: Set<string>;
  /** The keys of the nearest heading above it: its section's, which names its topic ("Wi-Fi bands"), or the document's title where the passage shows no section heading above it. */
  sectionKeys: Set<string>;
  /** Its phrasal verbs (see common/phrases), in an English sentence. */
  phrasalVerbs: Set<string>;
  /** Its Chinese characters, for the question's words that no sentence holds whole. */
  characters: Set<string>;
  /** How many distinct words it has: a long sentence holds a question's terms by chance more often than a short one. */
  length: number;
}

/** A document's file name as words ("aurora-x1-router-manual.md" → "aurora x1 router manual"): it names the document's topic, as a heading above all of it would. */
function documentName(source: string): string {
  return source.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[-_.]+/g, ' ');
}

/** Sentences of the passages, each once (see withoutRepeats). */
export function candidatesOf(passages: Passage[]): Candidate[] {
  const all: Candidate[] = [];
  const edges = new Set<Candidate>();
  // Sentences repeat between overlapping passages, and headings stand above several sentences: each is read once.
  const keysOf = new Map<string, Set<string>>();
  // A span of time is also a key of its own, the same in any unit or language ("12 个月" and "a year"), as is a phrase
  // ("power it on" and 通电); a percentage is a key of its own and not a number.
  const keys = (text: string) =>
    keysOf.get(text) ?? keysOf.set(text, new Set([...matchKeys(withoutPercentages(text)), ...durationKeys(text), ...percentageKeys(text), ...phraseKeys(text)])).get(text)!;
  const noKeys = new Set<string>();
  const noPhrasalVerbs = new Set<string>();
  passages.forEach((passage, rank) => {
    const sentences = passageSentencesWithHeadings(passage.text);
    sentences.forEach((sentence, index) => {
      // A chunk repeats the end of the one before it, and that may open inside a sentence: such a piece says nothing whole.
      if (index === 0 && sentences.length > 1 && OPENS_INSIDE_A_SENTENCE.test(sentence.text) && !containsCjk(sentence.text)) return;
      // Compared in the standard form, as the question is (a document in traditional characters answers 会员积分).
      const read = standardForm(sentence.text);
      const chinese = containsCjk(read);
      const candidate: Candidate = {
        text: sentence.text,
        chinese,
        passage,
        rank,
        order: rank * PASSAGE_ORDER + index,
        keys: keys(read),
        translatedKeys: chinese ? translatedKeys(keys(read)) : noKeys,
        phrasalVerbs: chinese ? noPhrasalVerbs : phrasalVerbs(read, { verbsOnly: false }),
        characters: new Set(chineseCharacters(read)),
        headingKeys: keys(standardForm([documentName(passage.source), ...sentence.headings].join(' '))),
        sectionKeys: keys(standardForm(sentence.headings.at(-1) ?? '')),
        length: wordKeys(read).size,
      };
      all.push(candidate);
      if (index === 0 || index === sentences.length - 1) edges.add(candidate);
    });
  });
  return withoutRepeats(all, edges);
}

/**
 * A word in lower case: an English sentence opens with a capital, the piece of one that a chunk's overlap repeats may
 * ("are erased."); a name written with a capital inside ("iPhone", "eBay") is no such word.
 */
const OPENS_INSIDE_A_SENTENCE = /^[a-z]+(?![\p{L}\p{N}])/u;

/** Room in `order` for a passage's sentences: a passage of 100 000 characters has fewer. */
const PASSAGE_ORDER = 1_000_000;

/**
 * The sentences without one that another holds whole: the overlap between neighbouring chunks repeats the sentences
 * around their boundary, and cuts one at the end of the first chunk and one at the start of the next. A sentence found
 * twice is kept where it is first; a piece of a sentence can only be the first or last sentence of its passage (an
 * `edge`), so only those are searched for in the others, and the cost grows with the sentences, not their square (every
 * sentence searched in every other took 1 s for 20 passages of 30 000 characters).
 */
function withoutRepeats(all: Candidate[], edges: ReadonlySet<Candidate>): Candidate[] {
  const normalised = new Map(all.map((candidate) => [candidate, candidate.text.replace(/\s+/g, ' ').toLowerCase()]));
  const firstOfText = new Map<string, Candidate>();
  for (const candidate of all) if (!firstOfText.has(normalised.get(candidate)!)) firstOfText.set(normalised.get(candidate)!, candidate);
  const once = [...firstOfText.values()];
  return once.filter((candidate) => {
    if (!edges.has(candidate)) return true;
    const text = normalised.get(candidate)!;
    return !once.some((other) => other !== candidate && normalised.get(other)!.length > text.length && normalised.get(other)!.includes(text));
  });
}
