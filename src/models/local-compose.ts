import { clip, containsCjk, splitSentences, tokenize } from '../common/text.js';
import type { CurrentWeather } from '../agent/tools/weather/weather.client.js';

/** Extractive answers for the offline model: sentences taken from tool results, with citations. */

export interface Passage {
  source: string;
  page?: number | null;
  text: string;
}

const MAX_SENTENCES = 3;

function citation(passage: Passage): string {
  return passage.page ? `[${passage.source} p.${passage.page}]` : `[${passage.source}]`;
}

/** The sentences of the passages that share most terms with the question, each cited. */
export function composeFromPassages(question: string, passages: Passage[]): string {
  const zh = containsCjk(question);
  if (passages.length === 0) {
    return zh ? '知识库中没有找到与这个问题相关的内容。' : 'I could not find anything about this in the knowledge base.';
  }
  const terms = new Set(tokenize(question));
  const candidates: Array<{ sentence: string; passage: Passage; score: number; order: number }> = [];
  passages.forEach((passage, rank) => {
    // The first line of a chunk is its heading: context for matching, not an answer.
    const [, ...bodyLines] = passage.text.split('\n');
    const body = bodyLines.length > 0 ? bodyLines.join('\n') : passage.text;
    splitSentences(body).forEach((sentence, index) => {
      const words = new Set(tokenize(sentence));
      let overlap = 0;
      for (const term of terms) if (words.has(term)) overlap += 1;
      // Earlier passages ranked higher by retrieval; earlier sentences break ties.
      candidates.push({ sentence, passage, score: overlap - rank * 0.5, order: rank * 1000 + index });
    });
  });
  const best = candidates
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_SENTENCES)
    .sort((a, b) => a.order - b.order);
  const chosen = best.length > 0 ? best : candidates.slice(0, 1);
  const body = chosen.map((c) => `${c.sentence} ${citation(c.passage)}`).join(zh ? '' : ' ');
  const sources = [...new Set(chosen.map((c) => c.passage.source))];
  return zh
    ? `根据知识库：${body}\n\n来源：${sources.join('、')}`
    : `According to the knowledge base: ${body}\n\nSources: ${sources.join(', ')}`;
}

export function composeWeather(question: string, toolOutput: string): string {
  const zh = containsCjk(question);
  let report: CurrentWeather | null = null;
  try {
    const parsed = JSON.parse(toolOutput) as CurrentWeather;
    if (typeof parsed?.temperature_c === 'number') report = parsed;
  } catch {
    report = null;
  }
  if (!report) {
    const reason = clip(toolOutput.replace(/^Weather unavailable:\s*/, ''), 200);
    return zh ? `暂时无法获取天气信息：${reason}` : `I could not get the weather: ${reason}`;
  }
  const wind = report.wind_kmh !== undefined ? (zh ? `，风速 ${report.wind_kmh} km/h` : `, wind ${report.wind_kmh} km/h`) : '';
  const humidity =
    report.humidity_percent !== undefined ? (zh ? `，湿度 ${report.humidity_percent}%` : `, humidity ${report.humidity_percent}%`) : '';
  return zh
    ? `${report.location}当前天气：${report.condition}，气温 ${report.temperature_c}°C${wind}${humidity}。`
    : `Current weather in ${report.location}: ${report.condition}, ${report.temperature_c}°C${wind}${humidity}.`;
}

/** An extractive summary: the first sentence of each line, clipped. */
export function summarizeExtractively(text: string, maxChars = 1200): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => clip(splitSentences(line)[0] ?? line, 160));
  return clip(lines.join('\n'), maxChars);
}
