import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One sample of a Prometheus text exposition: its name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sample names an exposition declares (its `# TYPE` lines; a histogram's as `_bucket`, `_sum` and `_count`), with samples or not yet. */
export function declaredNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(`${name}${suffix}`);
    else names.add(name);
  }
  return names;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sampleSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** Debian's promtool (package `prometheus`), when installed. */
export const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => spawnSync(path, ['--version']).status === 0);

/** `promtool check metrics` of an exposition: its exit status and what it printed (lint problems). */
export function promtoolCheck(exposition: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

/** `promtool check rules` of recording rules whose expressions are `expressions`: whether each is valid PromQL. */
export function promtoolCheckExpressions(expressions: string[]): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'promql-'));
  try {
    const rules = expressions.map((expr, i) => `      - record: dashboard:expression_${i}\n        expr: ${JSON.stringify(expr)}`).join('\n');
    const file = path.join(dir, 'rules.yml');
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
    const run = spawnSync(PROMTOOL!, ['check', 'rules', file], { encoding: 'utf8' });
    return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PromQL's functions, keywords and aggregations an expression of the dashboard may use besides metric names. */
const PROMQL_WORDS = new Set(['sum', 'max', 'min', 'avg', 'count', 'by', 'without', 'rate', 'increase', 'irate', 'histogram_quantile', 'le', 'e9', 'on', 'ignoring']);

/** The metric names `expr` reads: identifiers outside label matchers and grouping lists that are not PromQL's own words. */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((word) => !PROMQL_WORDS.has(word));
}
