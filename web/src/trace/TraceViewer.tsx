import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import type { Schemas } from '../api';
import { Bar, ChunkList, Field, Fields, fmtMs, TimingWaterfall } from './parts';
import './trace.css';

type RagTrace = Schemas['RagTrace'];
type RagSubTrace = Schemas['RagSubTrace'];
type Chunk = Schemas['RetrievedChunk'];

export type FocusChunk = { source: string; chunk_id?: string };

/** The stages whose chunks the trace keeps, in the order retrieval fills them. */
const CHUNK_STAGES = [
  { key: 'initial_chunks', title: 'Initial recall' },
  { key: 'rewrite_chunks', title: 'Rewrite recall' },
  { key: 'hitl_chunks', title: 'After the user’s answer (HITL)' },
  { key: 'final_chunks', title: 'Final evidence' },
] as const;

/** The chunk focusChunk names: by id when it has one, else the first of that source (final evidence first). */
function findFocus(trace: RagSubTrace, focus: FocusChunk | undefined): { stage: string; index: number } | null {
  if (!focus) return null;
  const order = ['final_chunks', 'hitl_chunks', 'rewrite_chunks', 'initial_chunks'] as const;
  const matches = (c: Chunk) => (focus.chunk_id ? c.chunk_id === focus.chunk_id : c.source === focus.source);
  for (const stage of order) {
    const index = (trace[stage] ?? []).findIndex(matches);
    if (index >= 0) return { stage, index };
  }
  if (focus.chunk_id) return findFocus(trace, { source: focus.source });
  return null;
}

/**
 * The trace of one answer in a dialog: stage timings as a waterfall, the
 * chunks of every stage with their scores and ranks as bars, sub-questions
 * side by side, grading, rewrite, rerank and auto-merge settings and errors.
 */
export function TraceViewer({ trace, onClose, focusChunk }: { trace: RagTrace; onClose: () => void; focusChunk?: FocusChunk }) {
  const dialog = useRef<HTMLElement>(null);
  const closeButton = useRef<HTMLButtonElement>(null);
  const headingId = useId();
  const focus = findFocus(trace, focusChunk);

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const target = dialog.current?.querySelector<HTMLElement>('[data-focused="true"]');
    if (target) {
      target.scrollIntoView({ block: 'center' });
      target.focus({ preventScroll: true });
    } else {
      closeButton.current?.focus();
    }
    // Focus goes back where it was when the dialog closes.
    return () => opener?.focus();
  }, []);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      onClose();
      return;
    }
    if (event.key !== 'Tab' || !dialog.current) return;
    // Keep Tab inside the dialog.
    const focusable = [...dialog.current.querySelectorAll<HTMLElement>('button, [href], summary, [tabindex]:not([tabindex="-1"]), input, select, textarea')].filter(
      (el) => !el.hasAttribute('disabled'),
    );
    if (focusable.length === 0) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };

  return (
    <div className="trace-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <section role="dialog" aria-modal="true" aria-label="Trace" aria-describedby={headingId} className="trace-dialog" ref={dialog} onKeyDown={onKeyDown}>
        <header className="trace-header">
          <h2 id={headingId}>Retrieval trace{trace.query ? <span className="trace-query">: “{trace.query}”</span> : null}</h2>
          <button type="button" ref={closeButton} onClick={onClose}>
            Close
          </button>
        </header>
        <div className="trace-body">
          <TraceSummary trace={trace} />
          <TraceSection title="Stage timings">
            <TimingWaterfall timings={trace.timings} parallel={subTraceTimes(trace)} />
          </TraceSection>
          <ChunkStages trace={trace} focus={focus} />
          <SubQuestions trace={trace} />
          <Grading trace={trace} />
          <Rewrite trace={trace} />
          <RetrievalSettings trace={trace} />
          <Hitl trace={trace} />
        </div>
      </section>
    </div>
  );
}

/** How long each sub-question's retrieval took: its own total, else the sum of its stages. */
function subTraceTimes(trace: RagTrace): Array<{ name: string; ms: number }> {
  return (trace.sub_traces ?? []).flatMap((sub, i) => {
    const t = sub.timings ?? {};
    const ms = t.total ?? Object.entries(t).reduce((sum, [k, v]) => (k === 'total' ? sum : sum + v), 0);
    return Object.keys(t).length ? [{ name: `sub-question ${i + 1}`, ms }] : [];
  });
}

function TraceSection({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section className="trace-section" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {children}
    </section>
  );
}

function TraceSummary({ trace }: { trace: RagSubTrace & { protocol_version?: number } }) {
  return (
    <Fields label="Summary">
      <Field name="Tool">{trace.tool_used === false ? 'not used' : (trace.tool_name ?? (trace.tool_used ? 'used' : undefined))}</Field>
      <Field name="Stage reached">{trace.retrieval_stage}</Field>
      <Field name="Mode">{trace.retrieval_mode}</Field>
      <Field name="Pipeline">{trace.pipeline_id}</Field>
      <Field name="Complexity">
        {trace.complexity}
        {trace.complexity_judge ? ` (judged by ${trace.complexity_judge})` : ''}
      </Field>
      <Field name="Complexity reason">{trace.complexity_reason}</Field>
      <Field name="Complexity fallback" error>
        {trace.complexity_fallback_reason}
      </Field>
      <Field name="Query truncated">{trace.query_truncated ? `yes (question was ${trace.query_original_length ?? '?'} characters)` : undefined}</Field>
      <Field name="Total">{trace.timings?.total !== undefined ? fmtMs(trace.timings.total) : undefined}</Field>
    </Fields>
  );
}

function ChunkStages({ trace, focus }: { trace: RagSubTrace; focus: { stage: string; index: number } | null }) {
  const stages = CHUNK_STAGES.filter((s) => (trace[s.key] ?? []).length > 0);
  const before = trace.pre_resume_snapshot?.final_chunks ?? [];
  if (stages.length === 0 && before.length === 0) {
    return (
      <TraceSection title="Chunks">
        <p className="trace-muted">{trace.final_empty ? 'Nothing passed the relevance threshold.' : 'No chunks were retrieved.'}</p>
      </TraceSection>
    );
  }
  return (
    <>
      {stages.map((s) => (
        <TraceSection key={s.key} title={`${s.title} (${trace[s.key]!.length})`}>
          <ChunkList chunks={trace[s.key]!} focusedIndex={focus?.stage === s.key ? focus.index : -1} label={s.title} />
        </TraceSection>
      ))}
      {before.length > 0 && (
        <TraceSection title={`Evidence before the pause (${before.length})`}>
          <ChunkList chunks={before} focusedIndex={-1} label="Evidence before the pause" />
        </TraceSection>
      )}
    </>
  );
}

function SubQuestions({ trace }: { trace: RagTrace }) {
  const subs = trace.sub_traces ?? [];
  const questions = trace.sub_questions ?? [];
  if (subs.length === 0 && questions.length === 0) return null;
  return (
    <TraceSection title={`Sub-questions (${Math.max(subs.length, questions.length)})`}>
      <Fields label="Fan-out">
        <Field name="Sub-agents">{trace.sub_agent_count}</Field>
        <Field name="Merged evidence">{trace.merged_evidence_count}</Field>
      </Fields>
      <div className="trace-subs">
        {Array.from({ length: Math.max(subs.length, questions.length) }, (_, i) => {
          const sub = subs[i];
          return (
            <article className="trace-sub" key={i} aria-label={`Sub-question ${i + 1}`}>
              <h4>
                {i + 1}. {questions[i] ?? sub?.query ?? 'sub-question'}
              </h4>
              {sub ? (
                <>
                  <TimingWaterfall timings={sub.timings} compact />
                  <Grading trace={sub} compact />
                  <Rewrite trace={sub} compact />
                  {(sub.final_chunks ?? sub.initial_chunks ?? []).length > 0 ? (
                    <ChunkList chunks={sub.final_chunks ?? sub.initial_chunks ?? []} focusedIndex={-1} label={`Sub-question ${i + 1} evidence`} compact />
                  ) : (
                    <p className="trace-muted">No chunks.</p>
                  )}
                  <ErrorList trace={sub} />
                </>
              ) : (
                <p className="trace-muted">No sub-trace.</p>
              )}
            </article>
          );
        })}
      </div>
    </TraceSection>
  );
}

function Grading({ trace, compact }: { trace: RagSubTrace; compact?: boolean }) {
  if (!trace.grade_route && !trace.evidence_status && trace.grade_confidence === undefined) return null;
  const body = (
    <Fields label="Grading">
      <Field name="Route">{trace.grade_route}</Field>
      <Field name="Evidence">{trace.evidence_status}</Field>
      <Field name="Relevance">{trace.evidence_relevance}</Field>
      <Field name="Answerability">{trace.evidence_answerability}</Field>
      <Field name="Ambiguity">{trace.evidence_ambiguity === null ? 'none' : trace.evidence_ambiguity}</Field>
      <Field name="Confidence">
        {trace.grade_confidence !== undefined ? (
          <Bar value={trace.grade_confidence} max={1} label={`Confidence ${trace.grade_confidence.toFixed(2)} of 1`} text={trace.grade_confidence.toFixed(2)} />
        ) : undefined}
      </Field>
      <Field name="Reason">{trace.grade_reason}</Field>
      <Field name="Judge">{trace.grade_judge}</Field>
      <Field name="Judge fallback" error>
        {trace.grade_fallback_reason}
      </Field>
    </Fields>
  );
  return compact ? body : <TraceSection title="Grading">{body}</TraceSection>;
}

function Rewrite({ trace, compact }: { trace: RagSubTrace; compact?: boolean }) {
  if (!trace.rewrite_mode && !trace.rewritten_query) return null;
  const body = (
    <Fields label="Rewrite">
      <Field name="Mode">{trace.rewrite_mode === 'hyde' ? 'hypothetical passage (HyDE)' : trace.rewrite_mode === 'step_back' ? 'step-back question' : undefined}</Field>
      <Field name="Rewritten query">{trace.rewritten_query}</Field>
      <Field name="Step-back question">{trace.step_back_question}</Field>
      <Field name="Hypothetical passage">{trace.hypothetical_doc}</Field>
      <Field name="Judge">{trace.rewrite_judge}</Field>
      <Field name="Rewrite fallback" error>
        {trace.rewrite_fallback_reason}
      </Field>
    </Fields>
  );
  return compact ? body : <TraceSection title="Rewrite">{body}</TraceSection>;
}

const onOff = (v: boolean | undefined) => (v === undefined ? undefined : v ? 'on' : 'off');
const yesNo = (v: boolean | undefined) => (v === undefined ? undefined : v ? 'yes' : 'no');

function RetrievalSettings({ trace }: { trace: RagSubTrace }) {
  return (
    <TraceSection title="Recall, auto-merge and rerank">
      <ErrorList trace={trace} />
      <div className="trace-settings">
        <Fields label="Recall">
          <Field name="Recall k">
            {trace.recall_k}
            {trace.recall_k_source ? ` (from ${trace.recall_k_source === 'env' ? 'RECALL_K' : `top k × ${trace.recall_multiplier ?? '?'}`})` : ''}
          </Field>
          <Field name="Top k">{trace.top_k}</Field>
          <Field name="Recalled">{trace.recalled_count}</Field>
          <Field name="Chunk level">{trace.initial_chunk_level}</Field>
          <Field name="Full-text terms">
            {trace.full_text_terms !== undefined ? `${trace.full_text_terms}${trace.full_text_terms_dropped ? ` (${trace.full_text_terms_dropped} dropped)` : ''}` : undefined}
          </Field>
        </Fields>
        <Fields label="Auto-merge">
          <Field name="Auto-merge">{onOff(trace.auto_merge_enabled)}</Field>
          <Field name="Applied">{yesNo(trace.auto_merge_applied)}</Field>
          <Field name="Threshold">{trace.auto_merge_threshold}</Field>
          <Field name="Children replaced">{trace.auto_merge_replaced_count}</Field>
          <Field name="Merged to level">{trace.auto_merge_level}</Field>
          <Field name="Candidates after merge">{trace.candidates_after_merge}</Field>
        </Fields>
        <Fields label="Rerank">
          <Field name="Rerank">{onOff(trace.rerank_enabled)}</Field>
          <Field name="Applied">{yesNo(trace.rerank_applied)}</Field>
          <Field name="Model">{trace.rerank_model}</Field>
          <Field name="Endpoint">{trace.rerank_endpoint}</Field>
          <Field name="Timeout">{trace.rerank_timeout_ms !== undefined ? fmtMs(trace.rerank_timeout_ms) : undefined}</Field>
          <Field name="In → out">{trace.rerank_input_count !== undefined ? `${trace.rerank_input_count} → ${trace.rerank_output_count ?? '?'}` : undefined}</Field>
          <Field name="Min relevance">{trace.min_relevance}</Field>
          <Field name="Kept after threshold">{trace.after_threshold_count}</Field>
          <Field name="Nothing kept">{trace.final_empty ? 'yes' : undefined}</Field>
        </Fields>
      </div>
    </TraceSection>
  );
}

/** Every error and fallback the trace records, so a degraded retrieval is visible at a glance. */
function ErrorList({ trace }: { trace: RagSubTrace }) {
  const errors = [
    ['Rerank error', trace.rerank_error],
    ['Full-text error', trace.full_text_error],
    ['Recall k configuration error', trace.recall_k_config_error],
  ].filter((e): e is [string, string] => Boolean(e[1]));
  if (errors.length === 0) return null;
  return (
    <ul className="trace-errors" aria-label="Retrieval errors">
      {errors.map(([name, text]) => (
        <li key={name}>
          <strong>{name}:</strong> {text}
        </li>
      ))}
    </ul>
  );
}

function Hitl({ trace }: { trace: RagSubTrace }) {
  const options = trace.clarification_options ?? [];
  const missing = trace.missing_conditions ?? [];
  if (!trace.clarification_prompt && !trace.hitl_resumed && options.length === 0 && missing.length === 0) return null;
  const snapshot = trace.pre_resume_snapshot;
  return (
    <TraceSection title="Human in the loop">
      <Fields label="Human in the loop">
        <Field name="Prompt">{trace.clarification_prompt}</Field>
        <Field name="Options">{options.length ? options.join(' · ') : undefined}</Field>
        <Field name="Missing">{missing.length ? missing.join(' · ') : undefined}</Field>
        <Field name="Resumed">{yesNo(trace.hitl_resumed)}</Field>
        <Field name="User’s answer">{trace.user_supplement}</Field>
        <Field name="Resume strategy">{trace.hitl_resume_strategy}</Field>
        <Field name="Before the pause">{snapshot ? [snapshot.retrieval_stage, snapshot.grade_route, snapshot.evidence_status].filter(Boolean).join(' / ') : undefined}</Field>
        <Field name="Reason before the pause">{snapshot?.grade_reason}</Field>
      </Fields>
    </TraceSection>
  );
}
