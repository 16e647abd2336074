/**
 * The shared rag-eval benchmark (MuSiQue, HotpotQA, CRUD-RAG; see its
 * SOURCES.md): locating it, reading its questions, and scoring ranked source
 * lists per `lang` and per `type`. Document-level: a question is a hit at k
 * when any of its gold files is among the first k distinct sources.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface RagEvalQuestion {
  q: string;
  gold: string[];
  lang: string;
  type: string;
}

export interface RagEvalDataset {
  dir: string;
  docsDir: string;
  questions: RagEvalQuestion[];
}

/** The types SOURCES.md names, in its order; any other type found is reported after them. */
export const RAG_EVAL_TYPES = ['musique_2hop', 'hotpotqa_comparison', 'hotpotqa_bridge', 'crud_questanswer_1doc', 'crud_questanswer_2docs'];

/** The repository root: the nearest folder above this module (bench/ or build/bench/) holding package.json. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

/** RAG_EVAL_DIR (resolved from the working directory) or `../shared/benchmarks/rag-eval` beside the repository. */
export function ragEvalDir(): string {
  const override = process.env.RAG_EVAL_DIR?.trim();
  return override ? path.resolve(override) : path.resolve(repoRoot(), '../shared/benchmarks/rag-eval');
}

/** The benchmark, or why it cannot be used (missing folder, questions or docs). Malformed questions throw. */
export async function loadRagEval(dir = ragEvalDir()): Promise<RagEvalDataset | { missing: string }> {
  const questionsFile = path.join(dir, 'questions.json');
  const docsDir = path.join(dir, 'docs');
  if (!existsSync(questionsFile)) return { missing: `${questionsFile} not found` };
  if (!existsSync(docsDir)) return { missing: `${docsDir} not found` };
  const raw: unknown = JSON.parse(await readFile(questionsFile, 'utf8'));
  if (!Array.isArray(raw)) throw new Error(`${questionsFile}: expected an array of questions`);
  const questions = raw.map((item: unknown, index): RagEvalQuestion => {
    const entry = item as Partial<RagEvalQuestion> | null;
    const valid =
      !!entry &&
      typeof entry.q === 'string' &&
      typeof entry.lang === 'string' &&
      typeof entry.type === 'string' &&
      Array.isArray(entry.gold) &&
      entry.gold.length > 0 &&
      entry.gold.every((g) => typeof g === 'string');
    if (!valid) throw new Error(`${questionsFile}: question ${index} is not {q, gold: [file names], lang, type}`);
    return { q: entry.q!, gold: entry.gold!, lang: entry.lang!, type: entry.type! };
  });
  return { dir, docsDir, questions };
}

/** Sources in order of their first appearance, at most `k`. */
export function distinctSources(sources: Array<string | undefined>, k: number): string[] {
  const seen: string[] = [];
  for (const source of sources) {
    if (source === undefined || seen.includes(source)) continue;
    seen.push(source);
    if (seen.length === k) break;
  }
  return seen;
}

/** 1-based rank of the first gold file among the distinct sources, or 0 when none is there. */
export function firstGoldRank(question: RagEvalQuestion, sources: string[]): number {
  return sources.findIndex((source) => question.gold.includes(source)) + 1;
}

export interface GroupScore {
  group: string;
  questions: number;
  recall: number;
  mrr: number;
}

/** recall@k and MRR@k overall, per lang and per type, from each question's first gold rank (0 = missed). */
export function scoreByGroup(questions: RagEvalQuestion[], ranks: number[]): GroupScore[] {
  const langs = [...new Set(questions.map((q) => q.lang))].sort();
  const types = [...RAG_EVAL_TYPES.filter((t) => questions.some((q) => q.type === t)), ...new Set(questions.map((q) => q.type).filter((t) => !RAG_EVAL_TYPES.includes(t)))];
  const groups: Array<[string, (q: RagEvalQuestion) => boolean]> = [
    ['all', () => true],
    ...langs.map((lang): [string, (q: RagEvalQuestion) => boolean] => [`lang=${lang}`, (q) => q.lang === lang]),
    ...types.map((type): [string, (q: RagEvalQuestion) => boolean] => [type, (q) => q.type === type]),
  ];
  return groups.map(([group, member]) => {
    const picked = questions.flatMap((q, i) => (member(q) ? [ranks[i]] : []));
    return {
      group,
      questions: picked.length,
      recall: picked.filter((rank) => rank > 0).length / picked.length,
      mrr: picked.reduce((sum, rank) => sum + (rank > 0 ? 1 / rank : 0), 0) / picked.length,
    };
  });
}

/** A markdown table: one row per group, a recall@k and an MRR@k column per method. */
export function formatTable(k: number, byMethod: Array<{ method: string; scores: GroupScore[] }>): string {
  const header = ['group', 'n', ...byMethod.flatMap(({ method }) => [`${method} R@${k}`, `${method} MRR`])];
  const rows = byMethod[0].scores.map((row, index) => [
    row.group,
    String(row.questions),
    ...byMethod.flatMap(({ scores }) => [scores[index].recall.toFixed(3), scores[index].mrr.toFixed(3)]),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, column) => (column < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)].join('\n');
}
