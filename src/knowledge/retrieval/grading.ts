import { standardForm } from '../../common/standard-form.js';
import type { RetrievalHit } from './retrieval.service.js';
import { englishKeysOf, holdsEnglishWord, translatedKeys } from '../../common/glossary.js';
import { matchKey, matchKeys, wordKeys } from '../../common/match-keys.js';
import { containsCjk, contentWords } from '../../common/text.js';

export interface Grade {
  grade_route: 'answer' | 'clarify';
  evidence_status: 'sufficient' | 'partial' | 'needs_clarification' | 'needs_choice';
  evidence_relevance: 'strong' | 'weak';
  evidence_answerability: 'sufficient' | 'partial' | 'none';
  evidence_ambiguity: 'missing_condition' | 'needs_choice' | null;
  grade_confidence: number;
  grade_reason: string;
  /** With needs_choice: what the user should choose between (until the knowledge flow labels them by title: file names without extension, as words). */
  options: string[];
  /** Parallel to `options`: the file each option stands for ('' when an option names no single retrieved file). */
  option_sources: string[];
}

const STRONG_SCORE = 0.5;
const SUFFICIENT_COVERAGE = 0.6;
const PARTIAL_COVERAGE = 0.3;
/** A document whose best hit scores at least this share of the best one competes with it. */
const CLOSE_RATIO = 0.8;
/** Without a shared title word in the question, the best-matching document must match at least this share of its words. */
const SUBJECT_COVERAGE = 0.5;
const MAX_OPTIONS = 4;

/** A file name's words (its extension dropped): what tells documents apart when the grading decides, not what the user reads. */
export function titleOf(source: string): string {
  return source.replace(/\.(md|txt|pdf)$/i, '').replace(/[-_]+/g, ' ');
}

/** A retrieved document as the judge sees it: its best score, the keys of its title and of its retrieved passages. */
interface RetrievedDocument {
  source: string;
  title: string;
  score: number;
  titleKeys: Set<string>;
  evidenceKeys: Set<string>;
}

const scoreOf = (hit: RetrievalHit) => hit.rerank_score ?? hit.score;

function documentsOf(hits: RetrievalHit[], hitKeys: Set<string>[]): RetrievedDocument[] {
  const bySource = new Map<string, RetrievedDocument>();
  hits.forEach((hit, i) => {
    let document = bySource.get(hit.source);
    if (!document) {
      const title = titleOf(hit.source);
      document = { source: hit.source, title, score: scoreOf(hit), titleKeys: matchKeys(standardForm(title)), evidenceKeys: new Set() };
      bySource.set(hit.source, document);
    }
    document.score = Math.max(document.score, scoreOf(hit));
    for (const key of hitKeys[i]) document.evidenceKeys.add(key);
  });
  // A stable sort: documents that score the same keep their retrieval order.
  return [...bySource.values()].sort((a, b) => b.score - a.score);
}

const intersect = (a: Set<string>, b: Set<string>) => new Set([...a].filter((key) => b.has(key)));

/**
 * Whether the question points at `document` among `others`: it names every
 * word of the document's title that the other titles lack (its qualifier,
 * say "x2" or "business"), or one such word that the others' passages never
 * use. A title word the other documents' passages use too (the X2 manual
 * calls its main node a "router") does not tell them apart.
 */
function namesDocument(terms: Set<string>, own: Set<string>, others: RetrievedDocument[]): boolean {
  const named = [...own].filter((key) => terms.has(key));
  return named.length === own.size || named.some((key) => others.every((other) => !other.evidenceKeys.has(key)));
}

const CJK_BIGRAM = /^[\u3400-\u9fff\uf900-\ufaff]{2}$/;

/**
 * The words of `document`'s title that the other titles lack. A Chinese
 * bigram that reaches into the shared part of the titles (础版 of 基础版服务条款
 * beside 专业版服务条款) is an artefact of bigram tokens, not a word of the
 * qualifier, and is left out when that leaves something.
 */
function ownTitleKeys(document: RetrievedDocument, group: RetrievedDocument[], shared: Set<string>): Set<string> {
  const own = new Set(document.titleKeys);
  for (const other of group) if (other !== document) for (const key of other.titleKeys) own.delete(key);
  const sharedCharacters = new Set([...shared].flatMap((key) => [...key]));
  const words = [...own].filter((key) => !(CJK_BIGRAM.test(key) && [...key].some((character) => sharedCharacters.has(character))));
  return words.length > 0 ? new Set(words) : own;
}

/**
 * The documents the user has to choose between, or null: the best document
 * and those scoring alike whose titles share a subject with it ("warranty",
 * "服务条款") but each carry words the others lack (a plan, model, region or
 * year), when the question names none of those qualifiers and the passages of
 * each match the question about equally well.
 */
function documentsToChooseBetween(query: string, terms: Set<string>, hits: RetrievalHit[], hitKeys: Set<string>[]): RetrievedDocument[] | null {
  const [top, ...rest] = documentsOf(hits, hitKeys);
  if (!top || top.score <= 0) return null;
  const group = [top];
  let shared = top.titleKeys;
  for (const document of rest) {
    if (group.length === MAX_OPTIONS || document.score < CLOSE_RATIO * top.score) break;
    const common = intersect(shared, document.titleKeys);
    if (common.size === 0) continue;
    group.push(document);
    shared = common;
  }
  if (group.length < 2) return null;

  const owns = group.map((document) => ownTitleKeys(document, group, shared));
  if (owns.some((own) => own.size === 0)) return null;
  if (
    group.some((document, i) =>
      namesDocument(
        terms,
        owns[i],
        group.filter((other) => other !== document),
      ),
    )
  )
    return null;

  // Comparable passages: each document matches about as many of the question's terms as the best one.
  const covered = group.map((document) => [...terms].filter((key) => document.evidenceKeys.has(key)).length);
  const most = Math.max(...covered);
  if (Math.min(...covered) < Math.max(1, Math.floor(CLOSE_RATIO * most))) return null;
  if (![...terms].some((key) => shared.has(key))) {
    // The question's subject is in no title, or in one only (the router case): the passages must carry it.
    const words = [...wordKeys(query)];
    const matched = Math.max(...group.map((document) => words.filter((key) => document.evidenceKeys.has(key)).length));
    if (words.length === 0 || matched / words.length < SUBJECT_COVERAGE) return null;
  }
  return group;
}

function listed(titles: string[]): string {
  return titles.length <= 2 ? titles.join(' and ') : `${titles.slice(0, -1).join(', ')} and ${titles.at(-1)}`;
}

/**
 * How many of the question's terms the evidence holds. Evidence partly or
 * wholly in the other language than the question holds its words only as
 * translations (see common/glossary): then the question's words are counted
 * too (no Chinese bigrams, which no translation can hold), each held as
 * written or translated, a model number counting twice; the better share
 * stands.
 */
function coverageOf(query: string, terms: Set<string>, hits: RetrievalHit[], evidenceKeys: Set<string>): { covered: number; of: number } {
  const asWritten = { covered: [...terms].filter((term) => evidenceKeys.has(term)).length, of: terms.size };
  const zh = containsCjk(query);
  const spelled = contentWords(query).map((word) => word.toLowerCase());
  const words = spelled.map(matchKey);
  if (words.length === 0 || hits.every((hit) => containsCjk(hit.text) === zh)) return asWritten;
  const translatedEvidence = translatedKeys(evidenceKeys);
  const chineseEvidence = hits.filter((hit) => containsCjk(hit.text)).map((hit) => hit.text);
  // Each word as written: one with translations of its own ("allowance") is held only by them (see holdsEnglishWord).
  const held = (i: number) =>
    evidenceKeys.has(words[i]) ||
    chineseEvidence.some((text) => holdsEnglishWord(text, translatedEvidence, spelled[i])) ||
    englishKeysOf(words[i]).some((key) => evidenceKeys.has(key));
  // A model number ("X2") is what a translation cannot stand in for: evidence without it is about something else.
  const weight = (word: string) => (/\d/.test(word) ? 2 : 1);
  const sum = (list: string[]) => list.reduce((total, word) => total + weight(word), 0);
  const translated = { covered: sum(words.filter((_, i) => held(i))), of: sum(words) };
  return translated.covered / translated.of > asWritten.covered / asWritten.of ? translated : asWritten;
}

/**
 * The local judge: grades evidence by what it can measure. Coverage is the
 * share of the question's terms (compared by stem, see common/match-keys) found in
 * the passages, as written or translated (see common/glossary); relevance comes from the rerank scores (or coverage when
 * there are none). Evidence that splits between documents scoring alike,
 * told apart by title words the question does not contain (say "X1" and
 * "X2", "basic" and "pro", "2023" and "2024"), is ambiguous: the user must
 * choose.
 */
export function gradeEvidence(query: string, hits: RetrievalHit[]): Grade {
  // Compared in the standard form (see common/standard-form), question and passages alike: 會員積分 is held by 会员积分.
  return gradeStandardEvidence(
    standardForm(query),
    hits,
    hits.map((hit) => ({ ...hit, text: standardForm(hit.text) })),
  );
}

/** gradeEvidence of a question in the standard form, with its hits as retrieved (for their titles) and `read` in the standard form. */
function gradeStandardEvidence(query: string, hits: RetrievalHit[], read: RetrievalHit[]): Grade {
  const terms = matchKeys(query);
  if (hits.length === 0 || terms.size === 0) {
    return {
      grade_route: 'answer',
      evidence_status: 'partial',
      evidence_relevance: 'weak',
      evidence_answerability: 'none',
      evidence_ambiguity: null,
      grade_confidence: 0.9,
      grade_reason: hits.length === 0 ? 'Nothing was retrieved.' : 'The question has no searchable terms.',
      options: [],
      option_sources: [],
    };
  }
  // Each passage is tokenized once, for the coverage and for telling documents apart.
  const hitKeys = read.map((hit) => matchKeys(hit.text));
  const evidenceKeys = new Set(hitKeys.flatMap((keys) => [...keys]));
  const { covered, of } = coverageOf(query, terms, read, evidenceKeys);
  const coverage = covered / of;
  const top = hits[0].rerank_score ?? coverage;
  const relevance: Grade['evidence_relevance'] = top >= STRONG_SCORE || coverage >= SUFFICIENT_COVERAGE ? 'strong' : 'weak';
  const answerability: Grade['evidence_answerability'] =
    coverage >= SUFFICIENT_COVERAGE && relevance === 'strong' ? 'sufficient' : coverage >= PARTIAL_COVERAGE ? 'partial' : 'none';

  const competing = documentsToChooseBetween(query, terms, hits, hitKeys);
  if (competing) {
    const [first, second] = competing;
    const titles = competing.map((document) => document.title);
    return {
      grade_route: 'clarify',
      evidence_status: 'needs_choice',
      evidence_relevance: relevance,
      evidence_answerability: answerability === 'sufficient' ? 'partial' : answerability,
      evidence_ambiguity: 'needs_choice',
      grade_confidence: Number((0.5 + 0.5 * (1 - Math.abs(first.score - second.score) / first.score)).toFixed(2)),
      grade_reason: `The evidence splits between ${listed(titles)}, which the question does not tell apart.`,
      options: titles,
      option_sources: competing.map((document) => document.source),
    };
  }
  const status: Grade['evidence_status'] = answerability === 'sufficient' ? 'sufficient' : 'partial';
  return {
    grade_route: 'answer',
    evidence_status: status,
    evidence_relevance: relevance,
    evidence_answerability: answerability,
    evidence_ambiguity: null,
    grade_confidence: Number(Math.min(1, 0.4 + 0.6 * Math.max(coverage, top)).toFixed(2)),
    grade_reason: `${covered} of ${of} question terms appear in the evidence; top relevance ${top.toFixed(2)}.`,
    options: [],
    option_sources: [],
  };
}
