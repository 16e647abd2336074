import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { tokenize } from '../common/text.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RetrievalHit, RetrievalResult, RetrievalService } from './retrieval.service.js';

interface IndexedChunk extends RetrievalHit {
  terms: Map<string, number>;
  length: number;
}

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** Splits a markdown document into one chunk per section, each keeping its heading. */
export function chunkMarkdown(text: string): string[] {
  const sections: string[] = [];
  let title = '';
  let current: string[] = [];
  const flush = () => {
    const body = current.join('\n').trim();
    if (body) sections.push(title ? `${title}\n${body}` : body);
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^#\s/.test(line)) {
      flush();
      title = line.replace(/^#\s+/, '').trim();
    } else if (/^#{2,}\s/.test(line)) {
      flush();
      current.push(line.replace(/^#+\s+/, '').trim());
    } else {
      current.push(line);
    }
  }
  flush();
  return sections;
}

/**
 * BM25 keyword retrieval over the corpus folder (`KNOWLEDGE_CORPUS_DIR`),
 * held in memory. The simple stand-in the knowledge tool uses until the
 * hybrid PostgreSQL pipeline replaces it.
 */
@Injectable()
export class KeywordRetrievalService extends RetrievalService implements OnModuleInit {
  private readonly logger = new Logger(KeywordRetrievalService.name);
  private chunks: IndexedChunk[] = [];
  private documentFrequency = new Map<string, number>();
  private averageLength = 1;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async onModuleInit(): Promise<void> {
    const dir = path.resolve(this.config.knowledge.corpusDir);
    let files: string[] = [];
    try {
      files = (await readdir(dir)).filter((f) => /\.(md|txt)$/i.test(f)).sort();
    } catch {
      this.logger.warn(`knowledge corpus folder ${dir} not found; the knowledge tool will find nothing`);
    }
    const documents = await Promise.all(
      files.map(async (file) => ({ source: file, text: await readFile(path.join(dir, file), 'utf8') })),
    );
    this.index(documents);
    this.logger.log(`indexed ${this.chunks.length} chunks from ${documents.length} documents in ${dir}`);
  }

  /** Replaces the index with these documents. */
  index(documents: Array<{ source: string; text: string }>): void {
    this.chunks = documents.flatMap((doc) =>
      chunkMarkdown(doc.text).map((text, i) => {
        const terms = new Map<string, number>();
        const tokens = tokenize(text);
        for (const token of tokens) terms.set(token, (terms.get(token) ?? 0) + 1);
        return { chunk_id: `${doc.source}#${i + 1}`, source: doc.source, page: null, text, score: 0, terms, length: tokens.length };
      }),
    );
    this.documentFrequency = new Map();
    for (const chunk of this.chunks) {
      for (const term of chunk.terms.keys()) this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
    }
    this.averageLength = this.chunks.reduce((sum, c) => sum + c.length, 0) / Math.max(this.chunks.length, 1) || 1;
  }

  async search(query: string, topK: number): Promise<RetrievalResult> {
    const queryTerms = [...new Set(tokenize(query))];
    const n = this.chunks.length;
    const scored: RetrievalHit[] = [];
    for (const chunk of this.chunks) {
      let score = 0;
      for (const term of queryTerms) {
        const tf = chunk.terms.get(term);
        if (!tf) continue;
        const df = this.documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += idf * ((tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * chunk.length) / this.averageLength)));
      }
      if (score > 0) {
        scored.push({ chunk_id: chunk.chunk_id, source: chunk.source, page: chunk.page, text: chunk.text, score: Number(score.toFixed(4)) });
      }
    }
    scored.sort((a, b) => b.score - a.score);
    return { hits: scored.slice(0, topK), recalled: scored.length, mode: 'keyword', pipelineId: 'keyword-bm25-v1' };
  }
}
