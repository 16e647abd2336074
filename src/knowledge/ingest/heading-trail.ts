import type { ChunkLocation } from './extraction-budget.js';

/** A markdown ATX heading, as a sentence of the chunker (a line, trimmed). */
const HEADING = /^(#{1,6})[ \t]+(.+)$/;
/** Its optional closing run of `#`. */
const CLOSING = /[ \t]+#+$/;
const FENCE = /^\s*(```|~~~)/;
/** Longest heading title kept in a path (characters). */
export const MAX_HEADING_TITLE = 200;

interface Heading {
  level: number;
  title: string;
}

/**
 * `text` cut before each heading line (outside fenced code blocks): every
 * part but maybe the first starts with its heading. The parts add up to the
 * text.
 */
export function headingSections(text: string): string[] {
  const sections: string[] = [];
  let start = 0;
  let inFence = false;
  let offset = 0;
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) inFence = !inFence;
    else if (!inFence && offset > start && HEADING.test(line.trim())) {
      sections.push(text.slice(start, offset));
      start = offset;
    }
    offset += line.length + 1;
  }
  sections.push(text.slice(start));
  return sections;
}

/**
 * The headings a place in a markdown-like text is under: `## Refunds` after
 * `# Returns` gives ['Returns', 'Refunds']. Immutable: `see` returns the
 * trail after a sentence (the same object when the sentence is no heading).
 * Lines inside fenced code blocks that look like headings (a `# comment`)
 * are not headings.
 */
export class HeadingTrail {
  private constructor(
    private readonly headings: readonly Heading[],
    private readonly fenced: readonly string[],
  ) {}

  /** The trail at the start of `text`, knowing the heading-like lines of its code blocks. */
  static start(text: string): HeadingTrail {
    const fenced: string[] = [];
    let inFence = false;
    for (const line of text.split('\n')) {
      if (FENCE.test(line)) inFence = !inFence;
      else if (inFence && HEADING.test(line.trim())) fenced.push(line.trim());
    }
    return new HeadingTrail([], fenced);
  }

  see(sentence: string): HeadingTrail {
    const match = HEADING.exec(sentence);
    if (!match) return this;
    // A sentence is a line, or the start of one (splitSentences also splits after a full stop).
    if (this.fenced.length > 0 && this.fenced.some((line) => line.startsWith(sentence))) return this;
    const title = match[2].replace(CLOSING, '').trim().slice(0, MAX_HEADING_TITLE);
    if (!title) return this;
    const level = match[1].length;
    return new HeadingTrail([...this.headings.filter((heading) => heading.level < level), { level, title }], this.fenced);
  }

  path(): string[] {
    return this.headings.map((heading) => heading.title);
  }

  /** The location of a chunk that starts here: its heading path, or null outside any heading. */
  location(): ChunkLocation | null {
    return this.headings.length ? { heading_path: this.path() } : null;
  }
}
