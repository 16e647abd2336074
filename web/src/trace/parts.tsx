import { Children, isValidElement, type ReactNode } from 'react';
import type { Schemas } from '../api';

type Chunk = Schemas['RetrievedChunk'];

export function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10000 ? 0 : 1)} s` : `${Math.round(ms)} ms`;
}

/** Where in its source a chunk came from besides its page: "sheet Products, row 9", "Returns › Refunds"; null when nothing is known. */
export function chunkPlace(chunk: Pick<Chunk, 'location'>): string | null {
  const location = chunk.location;
  if (!location) return null;
  if (location.row !== undefined) return location.sheet !== undefined ? `sheet ${location.sheet}, row ${location.row}` : `row ${location.row}`;
  return location.heading_path?.length ? location.heading_path.join(' › ') : null;
}

function fmtScore(value: number): string {
  return Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

function isEmpty(node: ReactNode): boolean {
  if (node === null || node === undefined || node === false || node === '') return true;
  if (Array.isArray(node)) return node.every(isEmpty);
  return false;
}

/** One labelled value; nothing when the trace does not have it. */
export function Field({ name, children, error }: { name: string; children?: ReactNode; error?: boolean }) {
  if (isEmpty(children)) return null;
  return (
    <div className={error ? 'trace-field trace-field-error' : 'trace-field'}>
      <dt>{name}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A definition list of Fields; nothing when none of them has a value. */
export function Fields({ label, children }: { label: string; children: ReactNode }) {
  const present = Children.toArray(children).filter((child) => isValidElement<{ children?: ReactNode }>(child) && !isEmpty(child.props.children));
  if (present.length === 0) return null;
  return (
    <dl className="trace-fields" aria-label={label}>
      {present}
    </dl>
  );
}

/** A horizontal bar, `value` of `max`, with a text for screen readers (the bar itself is a labelled image). */
export function Bar({ value, max, label, text, kind }: { value: number; max: number; label: string; text: string; kind?: string }) {
  const pct = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0;
  return (
    <span className="bar-row">
      <span className={`bar ${kind ? `bar-${kind}` : ''}`} role="img" aria-label={label}>
        <span className="bar-fill" style={{ width: `${pct}%` }} />
      </span>
      <span className="bar-text" aria-hidden="true">
        {text}
      </span>
    </span>
  );
}

/** The order the retrieval pipeline runs its stages in (stored traces lose key order: PostgreSQL jsonb sorts keys). */
const STAGE_ORDER = ['recall', 'auto_merge', 'rerank', 'threshold'];

function stageRank(name: string): number {
  const rewrite = name.startsWith('rewrite_');
  const base = rewrite ? name.slice('rewrite_'.length) : name;
  const at = STAGE_ORDER.indexOf(base);
  return (rewrite ? 100 : 0) + (at < 0 ? 50 : at);
}

/**
 * Stage timings as a waterfall. The stages run one after the other, so each
 * bar starts where the previous one ended; what `total` holds beyond the
 * timed stages (grading, choosing a rewrite) is one last, untimed bar.
 */
export function TimingWaterfall({
  timings,
  parallel = [],
  compact,
}: {
  timings?: Record<string, number>;
  /** Work that ran side by side from the start (the sub-questions' retrievals), one bar each. */
  parallel?: Array<{ name: string; ms: number }>;
  compact?: boolean;
}) {
  const entries = Object.entries(timings ?? {})
    .filter(([name, ms]) => name !== 'total' && Number.isFinite(ms))
    .sort((a, b) => stageRank(a[0]) - stageRank(b[0]));
  const total = timings?.total;
  if (entries.length === 0 && parallel.length === 0 && total === undefined) {
    return compact ? null : <p className="trace-muted">No stage timings recorded.</p>;
  }
  const rows: Array<{ name: string; start: number; ms: number; untimed?: boolean }> = parallel.map((p) => ({ name: p.name, start: 0, ms: p.ms }));
  let offset = Math.max(0, ...parallel.map((p) => p.ms));
  for (const [name, ms] of entries) {
    rows.push({ name, start: offset, ms });
    offset += ms;
  }
  if (total !== undefined && total > offset) rows.push({ name: 'other (grading, rewrite choice)', start: offset, ms: total - offset, untimed: true });
  const scale = Math.max(total ?? 0, offset, 1);
  return (
    <ol className={compact ? 'waterfall waterfall-compact' : 'waterfall'} aria-label="Stage timings">
      {rows.map((row) => (
        <li key={row.name} className="waterfall-row">
          <span className="waterfall-name">{row.name.replace(/_/g, ' ')}</span>
          <span className="waterfall-track" role="img" aria-label={`${row.name.replace(/_/g, ' ')}: ${fmtMs(row.ms)}, from ${fmtMs(row.start)} to ${fmtMs(row.start + row.ms)}`}>
            <span
              className={row.untimed ? 'waterfall-bar waterfall-untimed' : 'waterfall-bar'}
              style={{ left: `${(row.start / scale) * 100}%`, width: `max(2px, ${(row.ms / scale) * 100}%)` }}
            />
          </span>
          <span className="waterfall-ms" aria-hidden="true">
            {fmtMs(row.ms)}
          </span>
        </li>
      ))}
      {total !== undefined && (
        <li className="waterfall-row waterfall-total">
          <span className="waterfall-name">total</span>
          <span className="waterfall-track" aria-hidden="true" />
          <span className="waterfall-ms">{fmtMs(total)}</span>
        </li>
      )}
    </ol>
  );
}

/**
 * The chunks of one stage, best first, each with its source and page and its
 * recall score, RRF rank and rerank score as bars (scaled to the best of the list).
 */
export function ChunkList({ chunks, focusedIndex, label, compact }: { chunks: Chunk[]; focusedIndex: number; label: string; compact?: boolean }) {
  const maxScore = Math.max(0, ...chunks.map((c) => c.score ?? 0));
  const maxRank = Math.max(1, ...chunks.map((c) => c.rrf_rank ?? 0));
  const maxRerank = Math.max(1, ...chunks.map((c) => c.rerank_score ?? 0));
  return (
    <ol className={compact ? 'chunks chunks-compact' : 'chunks'} aria-label={label}>
      {chunks.map((chunk, i) => (
        <li
          key={`${chunk.chunk_id ?? chunk.source}-${i}`}
          className={i === focusedIndex ? 'chunk chunk-focused' : 'chunk'}
          data-testid="trace-chunk"
          data-source={chunk.source}
          data-chunk-id={chunk.chunk_id}
          data-focused={i === focusedIndex ? 'true' : undefined}
          tabIndex={i === focusedIndex ? -1 : undefined}
        >
          <div className="chunk-head">
            <span className="chunk-pos">{i + 1}.</span> <span className="chunk-source">{chunk.source}</span>
            {chunk.page !== null && chunk.page !== undefined && <span className="chunk-page">page {chunk.page}</span>}
            {chunkPlace(chunk) && <span className="chunk-page">{chunkPlace(chunk)}</span>}
          </div>
          <div className="chunk-bars">
            <span className="chunk-metric">score</span>
            {chunk.score !== null && chunk.score !== undefined ? (
              <Bar value={chunk.score} max={maxScore} label={`Recall score ${fmtScore(chunk.score)}`} text={fmtScore(chunk.score)} kind="score" />
            ) : (
              <span className="trace-muted">–</span>
            )}
            <span className="chunk-metric">RRF rank</span>
            {chunk.rrf_rank !== null && chunk.rrf_rank !== undefined ? (
              <Bar value={maxRank - chunk.rrf_rank + 1} max={maxRank} label={`RRF rank ${chunk.rrf_rank}`} text={`#${chunk.rrf_rank}`} kind="rank" />
            ) : (
              <span className="trace-muted">–</span>
            )}
            <span className="chunk-metric">rerank</span>
            {chunk.rerank_score !== null && chunk.rerank_score !== undefined ? (
              <Bar value={chunk.rerank_score} max={maxRerank} label={`Rerank score ${fmtScore(chunk.rerank_score)}`} text={fmtScore(chunk.rerank_score)} kind="rerank" />
            ) : (
              <span className="trace-muted">–</span>
            )}
          </div>
          {chunk.text && !compact && (
            <details className="chunk-text" open={i === focusedIndex}>
              <summary>Text</summary>
              <p>{chunk.text}</p>
            </details>
          )}
        </li>
      ))}
    </ol>
  );
}
