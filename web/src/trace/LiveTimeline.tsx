import type { Schemas } from '../api';
import { fmtMs } from './parts';
import './trace.css';

type StepEvent = Schemas['StepEvent'];
type ToolEvent = Schemas['ToolEvent'];

interface ToolCall {
  name: string;
  args?: Record<string, unknown>;
  status: 'running' | 'done' | 'failed';
  output?: string;
  truncated?: boolean;
}

/** Pairs each `end` with the oldest running `start` of the same tool. */
export function toolCalls(tools: ToolEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of tools) {
    if (event.phase === 'start') {
      calls.push({ name: event.name, args: event.summary.args, status: 'running' });
      continue;
    }
    let call = calls.find((c) => c.name === event.name && c.status === 'running');
    if (!call) calls.push((call = { name: event.name, status: 'running' }));
    call.status = event.summary.failed ? 'failed' : 'done';
    call.output = event.summary.output;
    call.truncated = event.summary.truncated;
  }
  return calls;
}

/** The stage's own details of a step (recall k, passages kept, route…), as short text. */
function stepDetails(step: StepEvent): string {
  const parts: string[] = [];
  if (step.original_length !== undefined) parts.push(`question ${step.original_length} → ${step.length ?? '?'} characters`);
  if (step.complexity) parts.push(step.complexity);
  if (step.index !== undefined) parts.push(`sub-question ${step.index + 1}`);
  if (step.recall_k !== undefined) parts.push(`k = ${step.recall_k}`);
  if (step.candidates !== undefined) parts.push(`${step.candidates} candidates`);
  if (step.model) parts.push(step.model);
  if (step.count !== undefined) parts.push(`${step.count} kept`);
  if (step.route) parts.push(`route ${step.route}`);
  if (step.confidence !== undefined) parts.push(`confidence ${step.confidence.toFixed(2)}`);
  if (step.mode) parts.push(step.mode === 'hyde' ? 'hypothetical passage' : 'step-back question');
  if (step.merged !== undefined) parts.push(`${step.merged} merged`);
  if (step.round !== undefined) parts.push(`round ${step.round}`);
  if (step.error) parts.push(`error: ${step.error}`);
  return parts.join(' · ');
}

function argsText(args: Record<string, unknown> | undefined): string {
  if (!args) return '';
  return Object.entries(args)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/**
 * While a turn runs: its retrieval steps in order (stage, label, time since
 * the previous step and since the turn began, drawn on one time axis) and its
 * tool calls (running, done, failed).
 */
export function LiveTimeline({ steps, tools }: { steps: StepEvent[]; tools: ToolEvent[] }) {
  const calls = toolCalls(tools);
  const end = Math.max(1, ...steps.map((s) => s.total_ms));
  const last = steps[steps.length - 1];
  return (
    <section aria-label="Retrieval steps" className="timeline">
      {calls.length > 0 && (
        <ul className="timeline-tools" aria-label="Tool calls">
          {calls.map((call, i) => (
            <li key={i} className={`tool tool-${call.status}`} data-testid="tool-call" data-status={call.status}>
              <span className="tool-name">{call.name}</span> <span className="tool-status">{call.status === 'running' ? 'running…' : call.status}</span>
              {call.args && <span className="tool-args"> ({argsText(call.args)})</span>}
              {call.output && (
                <details className="tool-output">
                  <summary>Output{call.truncated ? ' (cut)' : ''}</summary>
                  <p>{call.output}</p>
                </details>
              )}
            </li>
          ))}
        </ul>
      )}
      {steps.length === 0 && calls.length === 0 && <p className="trace-muted">Waiting for the first step…</p>}
      <ol className="timeline-steps" aria-label="Steps">
        {steps.map((step, i) => {
          const start = step.total_ms - step.elapsed_ms;
          const details = stepDetails(step);
          return (
            <li key={i} className={step.stage.endsWith('degraded') ? 'step step-degraded' : 'step'} data-testid="step" data-stage={step.stage}>
              <span className="step-stage">{step.stage.replace(/_/g, ' ')}</span>
              <span className="step-label">
                {step.label}
                {details && <span className="step-details"> — {details}</span>}
              </span>
              <span className="step-track" role="img" aria-label={`${fmtMs(step.elapsed_ms)} after the previous step, ${fmtMs(step.total_ms)} into the turn`}>
                <span className="step-bar" style={{ left: `${(Math.max(0, start) / end) * 100}%`, width: `max(2px, ${(step.elapsed_ms / end) * 100}%)` }} />
              </span>
              <span className="step-ms" aria-hidden="true">
                +{fmtMs(step.elapsed_ms)} · {fmtMs(step.total_ms)}
              </span>
            </li>
          );
        })}
      </ol>
      <p className="visually-hidden" aria-live="polite">
        {last ? `${last.label}, ${fmtMs(last.total_ms)}` : ''}
      </p>
    </section>
  );
}
