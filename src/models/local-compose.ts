import { questionParts } from '../common/question-parts.js';
import { sentencesOf } from '../common/sentences.js';
import { clip, containsCjk } from '../common/text.js';
import { standardForm } from '../common/standard-form.js';
import { inverseDocumentFrequency } from '../common/inverse-frequency.js';
import { questionPart } from './local-question.js';
import { partReferent } from './local-referent.js';
import { candidatesOf, type Candidate, type Passage } from './local-candidates.js';
import { modelNamesBySource, nameFactor, relevance } from './local-relevance.js';

/**
 * Extractive answers for the offline model: the sentences of the tool's
 * passages that answer the question, best first, each cited.
 */

/** At most this many sentences answer one question; a question of more parts gets one more per part beyond the second. */
const MAX_SENTENCES = 3;
/** A sentence that is not the best for its part joins the answer when it scores at least this share of the best. */
const SUPPORT_SHARE = 0.75;

function citation(passage: Passage): string {
  return passage.page ? `[${passage.source} p.${passage.page}]` : `[${passage.source}]`;
}

/** How rare each key is among the candidate sentences (BM25's inverse document frequency). */
function inverseFrequencies(candidates: Candidate[], keysOf: (candidate: Candidate) => Set<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const candidate of candidates) for (const key of keysOf(candidate)) counts.set(key, (counts.get(key) ?? 0) + 1);
  const n = candidates.length;
  const idf = new Map<string, number>();
  for (const [key, count] of counts) idf.set(key, inverseDocumentFrequency(n, count));
  return idf;
}

/**
 * The sentences that answer the question: for each of its parts, in the
 * order asked, the sentence that answers it best, then the sentences close
 * to that one (at least SUPPORT_SHARE of its score), at most MAX_SENTENCES
 * in all (one more per part beyond two). Ties go to the passage retrieval
 * ranked higher, then to the earlier sentence.
 */
function answeringSentences(question: string, candidates: Candidate[]): Candidate[] {
  const idf = inverseFrequencies(candidates, (candidate) => (candidate.translatedKeys.size > 0 ? new Set([...candidate.keys, ...candidate.translatedKeys]) : candidate.keys));
  const characterIdf = inverseFrequencies(candidates, (candidate) => candidate.characters);
  const rarest = Math.max(0, ...idf.values());
  const averageLength = Math.max(1, candidates.reduce((sum, candidate) => sum + candidate.length, 0) / candidates.length);
  const texts = questionParts(question);
  const parts = texts.map((part, index) => questionPart(part, idf, partReferent(texts, index)));
  const limit = Math.max(MAX_SENTENCES, parts.length + 1);
  const namedBySource = modelNamesBySource(candidates);
  const ranked = parts.map((part) =>
    candidates
      .map((candidate) => ({ candidate, score: relevance(candidate, part, idf, characterIdf, rarest, averageLength) * nameFactor(candidate, part, namedBySource) }))
      .filter((scored) => scored.score > 0)
      .sort((a, b) => b.score - a.score || a.candidate.rank - b.candidate.rank || a.candidate.order - b.candidate.order),
  );
  const taken = new Set<Candidate>();
  // The best sentence of each part first, so that every part is answered…
  const answers = ranked.map((scored) => {
    const best = scored.find((s) => !taken.has(s.candidate));
    if (best) taken.add(best.candidate);
    return { best, sentences: best ? [best.candidate] : [] };
  });
  // …then each part's close seconds in turn, while there is room.
  for (let round = 1; taken.size < limit && round < candidates.length; round += 1) {
    let added = false;
    answers.forEach((answer, i) => {
      const next = answer.best && ranked[i].find((s) => !taken.has(s.candidate) && s.score >= SUPPORT_SHARE * answer.best!.score);
      if (next && taken.size < limit) {
        taken.add(next.candidate);
        answer.sentences.push(next.candidate);
        added = true;
      }
    });
    if (!added) break;
  }
  // What the chosen sentences leave unanswered: one more sentence each, even beyond the limit.
  answers.forEach((answer, i) => {
    if (!answer.best) return;
    const part = parts[i];
    // The part asks for a time, a condition… (the most specific kind first), and none of its sentences gives it: the best sentence that does.
    const ungiven = part.kinds.find((answers) => !answer.sentences.some((sentence) => answers.test(sentence.text)));
    if (ungiven) {
      const giving = ranked[i].find((s) => !taken.has(s.candidate) && ungiven.test(s.candidate.text));
      if (giving) {
        taken.add(giving.candidate);
        answer.sentences.push(giving.candidate);
      }
    }
  });
  // A part that no sentence shares a term with ("…, and what gets lost?") is most likely answered by what follows the previous part's answer.
  answers.forEach((answer, i) => {
    if (answer.best || i === 0) return;
    const previous = answers[i - 1].best?.candidate;
    const next = previous && candidates.find((candidate) => candidate.passage === previous.passage && candidate.order === previous.order + 1);
    if (next && !taken.has(next)) {
      taken.add(next);
      answer.sentences.push(next);
    }
  });
  return answers.flatMap((answer) => answer.sentences);
}

/** The sentences of the passages that answer the question, best first, each cited, with the Sources line. */
export function composeFromPassages(question: string, passages: Passage[]): string {
  const zh = containsCjk(question);
  const nothingFound = zh ? '知识库中没有找到与这个问题相关的内容。' : 'I could not find anything about this in the knowledge base.';
  const candidates = candidatesOf(passages);
  if (candidates.length === 0) return nothingFound;
  const answering = answeringSentences(standardForm(question), candidates);
  // Nothing shares a term with the question: the first sentence retrieval ranked highest.
  const chosen = answering.length > 0 ? answering : candidates.slice(0, 1);
  // Chinese runs on after a citation; an English sentence keeps its space from the citation before it.
  const body = chosen.map((c, i) => `${i > 0 && (!zh || !c.chinese) ? ' ' : ''}${c.text} ${citation(c.passage)}`).join('');
  const sources = [...new Set(chosen.map((c) => c.passage.source))];
  return zh ? `根据知识库：${body}\n\n来源：${sources.join('、')}` : `According to the knowledge base: ${body}\n\nSources: ${sources.join(', ')}`;
}

/** An extractive summary: the first sentence of each line, clipped. */
export function summarizeExtractively(text: string, maxChars = 1200): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => clip(sentencesOf(line)[0] ?? line, 160));
  return clip(lines.join('\n'), maxChars);
}
