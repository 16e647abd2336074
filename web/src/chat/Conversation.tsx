import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { ChatStream } from '@agentic-rag/client';
import { api, ApiError, chat, draftStore, type Schemas } from '../api';
import { useCollections } from '../knowledge/collections';
import { LiveTimeline, TraceViewer } from '../trace';
import { CollectionPicker } from './CollectionPicker';
import { Composer } from './Composer';
import { EmptyState } from './EmptyState';
import { describeFailure, describeStreamError, unwrap } from './errors';
import { MessageBody, type CitedChunk } from './MessageBody';
import { followTurn } from './runTurn';
import { SourcePanel } from './SourcePanel';

type SessionInfo = Schemas['SessionInfo'];
type MessageInfo = Schemas['MessageInfo'];
type RagTrace = Schemas['RagTrace'];
type StepEvent = Schemas['StepEvent'];
type ToolEvent = Schemas['ToolEvent'];
type PendingHitl = Schemas['PendingHitlState'];
type LiveStatus = 'streaming' | 'complete' | 'cancelled' | 'failed';

/** The turn in flight (or just ended, until the stored transcript replaces it). */
interface LiveTurn {
  /** The text sent, shown until the transcript has it; for a rejoined run, its message once read from the run (null until then). */
  human: string | null;
  accepted: boolean;
  runId?: string;
  text: string;
  steps: StepEvent[];
  tools: ToolEvent[];
  trace: RagTrace | null;
  hitl: PendingHitl | null;
  status: LiveStatus;
}

const PAGE = 100;

export interface ConversationProps {
  sessionId: string | null;
  /** The session as the list showed it when it was opened: its pending question and running run. */
  session: SessionInfo | null;
  /** Changes whenever the user opens a session or starts a new chat (not when a new chat's first turn names its session). */
  openNonce: number;
  onSessionStarted(sessionId: string): void;
  onTurnSettled(): void;
  onUnauthorized(reason?: string): void;
  /** The opened session is not the user's (forged address, deleted meanwhile): start a new chat instead. */
  onSessionGone(): void;
  /** The session as the service answered a change of it (the collections it searches). */
  onSessionUpdated(session: SessionInfo): void;
}

/** The words for a turn refused because a collection it names (or its session saved) is not readable. */
const SCOPE_GONE = 'A collection chosen for this chat does not exist or is no longer shared with you: choose the collections to search again.';

/** One conversation: its transcript, the streamed turn, the composer, HITL choices, feedback and the trace viewer. */
export function Conversation({ sessionId, session, openNonce, onSessionStarted, onTurnSettled, onUnauthorized, onSessionGone, onSessionUpdated }: ConversationProps) {
  const [messages, setMessages] = useState<MessageInfo[]>([]);
  const [earlier, setEarlier] = useState<number | null>(null);
  const [loadingMessages, setLoadingMessages] = useState(false);
  const [live, setLive] = useState<LiveTurn | null>(null);
  const [pendingHitl, setPendingHitl] = useState<PendingHitl | null>(null);
  const [text, setText] = useState(() => draftStore.get());
  useEffect(() => draftStore.set(text), [text]);
  const [error, setError] = useState<string | null>(null);
  const [reconnecting, setReconnecting] = useState(false);
  const [traceView, setTraceView] = useState<{ trace: RagTrace; focus?: CitedChunk } | null>(null);
  const [sourceView, setSourceView] = useState<{ chunkId: string; trace: RagTrace; focus: CitedChunk } | null>(null);
  const { collections, reload: reloadCollections } = useCollections();
  /** The collections this conversation's turns search (null: every one the user can read), as saved on its session. */
  const [scope, setScope] = useState<string[] | null>(null);
  const [scopeStatus, setScopeStatus] = useState('');
  const scopeRef = useRef<string[] | null>(null);
  const scopeRequest = useRef(0);
  /** The save of the choice on its way, if any: a turn that sends no choice waits for it (the session's saved one applies). */
  const scopeSaving = useRef<Promise<void> | null>(null);
  const sessionRef = useRef<string | null>(sessionId);
  const controllerRef = useRef<AbortController | null>(null);
  const stopRequested = useRef(false);
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const running = !!live && live.status === 'streaming';

  const loadMessages = useCallback(
    async (id: string, signal: AbortSignal): Promise<boolean> => {
      setLoadingMessages(true);
      try {
        const result = await api.GET('/api/sessions/{session_id}/messages', {
          params: { path: { session_id: id }, query: { limit: PAGE } },
          signal,
        });
        const page = unwrap(result, onUnauthorized);
        if (signal.aborted) return false;
        setMessages(page.messages);
        setEarlier(page.next_before);
        return true;
      } catch (failure) {
        if (!signal.aborted) setError(describeFailure(failure));
        if (!signal.aborted && failure instanceof ApiError && failure.status === 404) onSessionGone();
        return false;
      } finally {
        if (!signal.aborted) setLoadingMessages(false);
      }
    },
    [onUnauthorized, onSessionGone],
  );

  const readSavedScope = async (id: string, signal: AbortSignal) => {
    const request = scopeRequest.current;
    const result = await api.GET('/api/sessions/{session_id}', { params: { path: { session_id: id } }, signal }).catch(() => null);
    if (!result?.data || signal.aborted || request !== scopeRequest.current) return;
    scopeRef.current = result.data.collection_ids;
    setScope(result.data.collection_ids);
  };

  /** Saves the choice on the session (PATCH), so the session's turns search it and it comes back when the session is opened again. */
  const saveScope = useCallback(
    async (id: string, next: string[] | null) => {
      const request = ++scopeRequest.current;
      setScopeStatus('Saving…');
      try {
        const result = await api.PATCH('/api/sessions/{session_id}', { params: { path: { session_id: id } }, body: { collection_ids: next } });
        const updated = unwrap(result, onUnauthorized);
        onSessionUpdated(updated); // the list keeps it even when another session was opened meanwhile
        if (request !== scopeRequest.current) return;
        setScopeStatus('Saved for this chat.');
      } catch (failure) {
        if (request !== scopeRequest.current) return;
        setScopeStatus('');
        setError(failure instanceof ApiError && failure.body?.code === 'collection_not_found' ? SCOPE_GONE : describeFailure(failure));
      }
    },
    [onUnauthorized, onSessionUpdated],
  );

  const changeScope = (next: string[] | null) => {
    scopeRef.current = next;
    setScope(next);
    if (sessionRef.current) {
      const saving = saveScope(sessionRef.current, next);
      scopeSaving.current = saving;
      void saving.finally(() => {
        if (scopeSaving.current === saving) scopeSaving.current = null;
      });
    } else setScopeStatus(next === null ? '' : 'Applies from the first question of this chat.');
  };

  /** Follows a run's stream into the live turn; `sent` is the text of a new turn (null for a rejoin). */
  const follow = useCallback(
    async (stream: ChatStream, sent: string | null, controller: AbortController) => {
      const { signal } = controller;
      let accepted = sent === null;
      const update = (change: (turn: LiveTurn) => LiveTurn) => {
        if (!signal.aborted) setLive((turn) => (turn ? change(turn) : turn));
      };
      let hitl = null as PendingHitl | null;
      try {
        const end = await followTurn(
          stream,
          (event) => {
            if (signal.aborted) return;
            switch (event.event) {
              case 'metadata': {
                accepted = true;
                // The turn is accepted: the composer's text is now the transcript's (unless the user already typed on).
                if (sent !== null) {
                  setText((current) => (current === sent ? '' : current));
                  setPendingHitl(null); // this message answers the paused question, if there was one
                }
                const started = sessionRef.current === null;
                sessionRef.current = event.data.session_id;
                if (started) onSessionStarted(event.data.session_id);
                // A new chat's choice of collections went with its first turn; now it is saved on the session the turn created.
                if (started && scopeRef.current !== null) void saveScope(event.data.session_id, scopeRef.current);
                update((turn) => ({ ...turn, accepted: true, runId: event.data.run_id }));
                break;
              }
              case 'step':
                update((turn) => ({ ...turn, steps: [...turn.steps, event.data] }));
                break;
              case 'tool':
                update((turn) => ({ ...turn, tools: [...turn.tools, event.data] }));
                break;
              case 'token':
                update((turn) => ({ ...turn, text: turn.text + event.data.text }));
                break;
              case 'hitl':
                hitl = event.data;
                update((turn) => ({ ...turn, hitl: event.data }));
                break;
              case 'trace':
                update((turn) => ({ ...turn, trace: event.data }));
                break;
              case 'done':
                update((turn) => ({ ...turn, text: turn.text || event.data.response }));
                break;
              default:
                break;
            }
          },
          signal,
          (value) => !signal.aborted && setReconnecting(value),
        );
        if (end.kind === 'aborted' || signal.aborted) return;
        if (end.kind === 'done') {
          update((turn) => ({ ...turn, status: 'complete' }));
          if (hitl) setPendingHitl(hitl);
        } else {
          const cancelled = end.data.code === 'cancelled';
          update((turn) => ({ ...turn, status: cancelled ? 'cancelled' : 'failed' }));
          if (!(cancelled && stopRequested.current)) setError(describeStreamError(end.data.code, end.data.message));
          // The service did not keep the question: give it back to the composer.
          if (end.data.message_saved === false && sent !== null) setText((current) => (current.trim() ? current : sent));
        }
      } catch (failure) {
        if (signal.aborted) return;
        if (failure instanceof ApiError && failure.status === 401) onUnauthorized(failure.body?.message);
        const scopeGone = failure instanceof ApiError && failure.body?.code === 'collection_not_found';
        setError(scopeGone ? SCOPE_GONE : describeFailure(failure));
        if (scopeGone) void reloadCollections();
        if (!accepted) {
          // Refused: nothing was stored, the composer still holds the text.
          setLive(null);
          return;
        }
        update((turn) => ({ ...turn, status: 'failed' }));
      } finally {
        if (!signal.aborted) setReconnecting(false);
      }
      // The stored transcript replaces the live turn (ids for feedback, the trace, the final status).
      const id = sessionRef.current;
      if (id && (await loadMessages(id, signal)) && !signal.aborted) {
        setLive((turn) => (turn && turn.status !== 'streaming' ? null : turn));
      }
      if (!signal.aborted) onTurnSettled();
    },
    [loadMessages, onSessionStarted, onTurnSettled, onUnauthorized, saveScope, reloadCollections],
  );

  // Opening a session (or a new chat): load its transcript and rejoin its running run from the start.
  useEffect(() => {
    controllerRef.current?.abort();
    const controller = new AbortController();
    controllerRef.current = controller;
    sessionRef.current = sessionId;
    stickToBottom.current = true;
    // Another session's transcript must not show while this one's loads: the view resets with the session it shows.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setMessages([]);
    setEarlier(null);
    setLive(null);
    setError(null);
    setTraceView(null);
    setSourceView(null);
    setReconnecting(false);
    setPendingHitl(session?.pending_hitl ?? null);
    // The collections saved on the session; a session opened without its listing (deep in the list) is read for them.
    const known = session?.session_id === sessionId ? session : null;
    scopeRequest.current += 1;
    scopeRef.current = known?.collection_ids ?? null;
    setScope(scopeRef.current);
    setScopeStatus('');
    if (sessionId && !known) void readSavedScope(sessionId, controller.signal);
    if (sessionId) {
      void loadMessages(sessionId, controller.signal);
      const active = session?.session_id === sessionId ? session.active_run : null;
      if (active) {
        stopRequested.current = false;
        setLive({ human: null, accepted: true, runId: active.run_id, text: '', steps: [], tools: [], trace: null, hitl: null, status: 'streaming' });
        void follow(chat.rejoin(active.run_id, { signal: controller.signal }), null, controller);
        // The run's question is stored with its answer, at the end: until then it is read from the run itself.
        void api
          .GET('/api/chat/runs/{run_id}', { params: { path: { run_id: active.run_id } }, signal: controller.signal })
          .then(({ data }) => {
            const question = data?.message;
            if (question && !controller.signal.aborted) setLive((turn) => (turn && turn.runId === active.run_id && turn.human === null ? { ...turn, human: question } : turn));
          })
          .catch(() => undefined);
      }
    }
    return () => controller.abort();
    // Only an explicit open restarts the conversation; a new chat's first turn naming its session must not.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [openNonce]);

  const send = (message: string) => {
    if (running || !message.trim()) return;
    setError(null);
    stopRequested.current = false;
    controllerRef.current?.abort();
    const controller = new AbortController();
    controllerRef.current = controller;
    stickToBottom.current = true;
    setLive({ human: message, accepted: false, text: '', steps: [], tools: [], trace: null, hitl: null, status: 'streaming' });
    // The choice goes with every turn (a new chat has no session to have saved it on yet; a save may still be on its way).
    // "All" is no choice in the body (the session's saved one applies), so that turn waits for the save of "All" first.
    const collectionIds = scopeRef.current;
    const saving = collectionIds ? null : scopeSaving.current;
    const start = () => {
      if (controller.signal.aborted) return;
      const stream = chat.stream(
        { message, ...(sessionRef.current ? { session_id: sessionRef.current } : {}), ...(collectionIds ? { collection_ids: collectionIds } : {}) },
        { signal: controller.signal },
      );
      void follow(stream, message, controller);
    };
    if (saving) {
      setScopeStatus('Saving… the question goes once the choice is saved.');
      void saving.then(start);
    } else start();
  };

  const stop = async () => {
    if (!live?.runId) return;
    stopRequested.current = true;
    try {
      await chat.cancel(live.runId);
    } catch (failure) {
      stopRequested.current = false;
      if (failure instanceof ApiError && failure.status === 401) onUnauthorized(failure.body?.message);
      setError(describeFailure(failure));
    }
  };

  /** Stores a comment with the message's rating (the API keeps both together). */
  const comment = async (message: MessageInfo, text: string): Promise<boolean> => {
    const id = sessionRef.current;
    const rating = message.feedback?.rating;
    if (!id || !rating) return false;
    try {
      const result = await api.PUT('/api/sessions/{session_id}/messages/{message_id}/feedback', {
        params: { path: { session_id: id, message_id: message.id } },
        body: { rating, comment: text.trim() || null },
      });
      const updated = unwrap(result, onUnauthorized);
      setMessages((all) => all.map((m) => (m.id === updated.id ? updated : m)));
      return true;
    } catch (failure) {
      setError(describeFailure(failure));
      return false;
    }
  };

  const rate = async (message: MessageInfo, rating: 'up' | 'down') => {
    const id = sessionRef.current;
    if (!id) return;
    const params = { path: { session_id: id, message_id: message.id } };
    try {
      const result =
        message.feedback?.rating === rating
          ? await api.DELETE('/api/sessions/{session_id}/messages/{message_id}/feedback', { params })
          : // A PUT replaces the whole feedback: a changed rating keeps the comment written with the earlier one.
            await api.PUT('/api/sessions/{session_id}/messages/{message_id}/feedback', { params, body: { rating, comment: message.feedback?.comment ?? null } });
      const updated = unwrap(result, onUnauthorized);
      setMessages((all) => all.map((m) => (m.id === updated.id ? updated : m)));
    } catch (failure) {
      setError(describeFailure(failure));
    }
  };

  const loadEarlier = async () => {
    const id = sessionRef.current;
    if (!id || earlier === null) return;
    try {
      const result = await api.GET('/api/sessions/{session_id}/messages', { params: { path: { session_id: id }, query: { limit: PAGE, before: earlier } } });
      const page = unwrap(result, onUnauthorized);
      stickToBottom.current = false;
      setMessages((all) => [...page.messages, ...all.filter((m) => !page.messages.some((p) => p.id === m.id))]);
      setEarlier(page.next_before);
    } catch (failure) {
      setError(describeFailure(failure));
    }
  };

  useLayoutEffect(() => {
    const box = scroller.current;
    if (box && stickToBottom.current) box.scrollTop = box.scrollHeight;
  }, [messages, live]);

  const openTrace = (trace: RagTrace, focus?: CitedChunk) => {
    setSourceView(null);
    setTraceView({ trace, focus });
  };
  /** A citation opens its source (the chunk read again, under the user's access); one without a chunk id (an old trace) opens the trace. */
  const openCitation = (trace: RagTrace, chunk: CitedChunk) => {
    if (!chunk.chunk_id) return openTrace(trace, chunk);
    setTraceView(null);
    setSourceView({ chunkId: chunk.chunk_id, trace, focus: chunk });
  };
  const closeSource = useCallback(() => setSourceView(null), []);
  const visible = messages.filter((m) => m.type !== 'system');
  // The live human bubble goes once the transcript holds the turn's question.
  const showLiveHuman = !!live?.human && !(live.runId && visible.some((m) => m.type === 'human' && m.run_id === live.runId));
  const lastIsAi = !live && visible.at(-1)?.type === 'ai';
  const answered = new Set(visible.flatMap((m) => (m.type === 'ai' && m.run_id ? [m.run_id] : [])));

  return (
    <section className="conversation" aria-label="Conversation">
      <div
        className="messages"
        ref={scroller}
        onScroll={(e) => {
          const box = e.currentTarget;
          stickToBottom.current = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
        }}
      >
        {earlier !== null && (
          <button type="button" className="load-earlier" onClick={loadEarlier}>
            Show earlier messages
          </button>
        )}
        {!sessionId && !live && visible.length === 0 && <EmptyState collections={collections} onAsk={(question) => send(question)} />}
        {loadingMessages && visible.length === 0 && !live && <p className="muted">Loading the conversation…</p>}
        {visible.map((m) => (
          <article key={m.id} data-testid="message" data-role={m.type === 'human' ? 'human' : 'ai'} data-status={m.status} data-message-id={m.id} className={`message ${m.type}`}>
            {m.type === 'ai' && <ToolChips names={m.tools ?? []} />}
            <MessageBody content={m.content} trace={m.rag_trace} onCite={m.rag_trace ? (chunk) => openCitation(m.rag_trace!, chunk) : undefined} />
            {/* A stopped or failed turn says so once: on its kept answer when there is one, else on its question. */}
            {!(m.type === 'human' && m.run_id && answered.has(m.run_id)) && <StatusNote status={m.status} role={m.type} />}
            {m.type === 'ai' && (
              <div className="message-tools">
                {m.rag_trace && (
                  <button type="button" onClick={() => openTrace(m.rag_trace!)}>
                    Show trace
                  </button>
                )}
                {!isClarification(m) && (
                  <>
                    <button type="button" className="thumb" aria-pressed={m.feedback?.rating === 'up'} onClick={() => rate(m, 'up')}>
                      <Thumb /> Helpful
                    </button>
                    <button type="button" className="thumb" aria-pressed={m.feedback?.rating === 'down'} onClick={() => rate(m, 'down')}>
                      <Thumb down /> Not helpful
                    </button>
                  </>
                )}
              </div>
            )}
            {m.type === 'ai' && m.feedback && !isClarification(m) && (
              <FeedbackComment key={`${m.id}:${m.feedback.comment ?? ''}`} saved={m.feedback.comment ?? ''} onSave={(text) => comment(m, text)} />
            )}
          </article>
        ))}
        {live && showLiveHuman && (
          <article
            data-testid="message"
            data-role="human"
            data-status={live.accepted ? (live.status === 'cancelled' || live.status === 'failed' ? live.status : 'complete') : 'streaming'}
            className="message human"
          >
            <MessageBody content={live.human!} />
            {!live.accepted && <p className="muted small">Sending…</p>}
          </article>
        )}
        {live && live.accepted && (
          <article data-testid="message" data-role="ai" data-status={live.status} className="message ai" aria-busy={live.status === 'streaming'}>
            <ToolChips names={live.tools.map((tool) => tool.name)} />
            {live.status === 'streaming' && (live.steps.length > 0 || live.tools.length > 0) && <LiveTimeline steps={live.steps} tools={live.tools} />}
            {live.text ? (
              <MessageBody content={live.text} trace={live.trace} onCite={live.trace ? (chunk) => openCitation(live.trace!, chunk) : undefined} />
            ) : (
              live.status === 'streaming' && <p className="muted thinking">Thinking…</p>
            )}
            <StatusNote status={live.status} role={live.text ? 'ai' : 'human'} />
            {live.trace && (
              <div className="message-tools">
                <button type="button" onClick={() => openTrace(live.trace!)}>
                  Show trace
                </button>
              </div>
            )}
          </article>
        )}
        {pendingHitl && !running && (lastIsAi || live) && (
          <div className="hitl">
            <p className="hitl-prompt">
              {/* The paused turn's answer above is the prompt already; repeat it only when it is not. */}
              {pendingHitl.clarification_prompt && pendingHitl.clarification_prompt.trim() !== visible.at(-1)?.content.trim()
                ? pendingHitl.clarification_prompt
                : 'Waiting for your answer.'}
            </p>
            {!!pendingHitl.options?.length && (
              <div role="group" aria-label="Choose an option" className="hitl-options">
                {pendingHitl.options.map((option, i) => {
                  // The document's title, and its file beneath it when that says something else.
                  const file = pendingHitl.option_sources?.[i];
                  return (
                    <button key={option} type="button" aria-label={option} onClick={() => send(option)}>
                      <span className="hitl-option-title">{option}</span>
                      {file && file !== option && <span className="hitl-option-file">{file}</span>}
                    </button>
                  );
                })}
              </div>
            )}
            <p className="muted small">Choose an option, or type your answer below.</p>
          </div>
        )}
      </div>
      <div className="turn-status" aria-live="polite">
        {reconnecting && <p className="muted">Connection lost; reconnecting…</p>}
      </div>
      {error && (
        <div role="alert" className="error-banner">
          <span>{error}</span>
          <button type="button" onClick={() => setError(null)} aria-label="Dismiss error">
            ×
          </button>
        </div>
      )}
      <CollectionPicker collections={collections} value={scope} onChange={changeScope} onExpand={() => void reloadCollections()} status={scopeStatus} />
      <Composer text={text} onText={setText} onSend={() => send(text)} onStop={stop} running={running} canStop={!!live?.runId} disabled={false} />
      {traceView && <TraceViewer trace={traceView.trace} focusChunk={traceView.focus} onClose={() => setTraceView(null)} />}
      {sourceView && (
        <SourcePanel
          key={sourceView.chunkId}
          chunkId={sourceView.chunkId}
          collections={collections}
          onClose={closeSource}
          onShowTrace={() => openTrace(sourceView.trace, sourceView.focus)}
          onUnauthorized={onUnauthorized}
        />
      )}
    </section>
  );
}

/**
 * Whether an answer is the question a paused turn put to the user (its trace's clarification prompt is its text):
 * there is nothing to rate in it. A resumed turn's answer keeps the earlier prompt in its trace, but not as its text.
 */
function isClarification(message: MessageInfo): boolean {
  const prompt = message.rag_trace?.clarification_prompt;
  return !!prompt && prompt.trim() === message.content.trim();
}

/** The comment that goes with a rating: optional, saved with it, shown again when the session is opened. */
function FeedbackComment({ saved, onSave }: { saved: string; onSave(text: string): Promise<boolean> }) {
  const [text, setText] = useState(saved);
  const [status, setStatus] = useState('');
  const changed = text.trim() !== saved.trim();
  return (
    <form
      className="feedback-comment"
      onSubmit={async (event) => {
        event.preventDefault();
        setStatus('Saving…');
        setStatus((await onSave(text)) ? 'Comment saved.' : '');
      }}
    >
      <label>
        <span className="small muted">Comment on this answer (optional)</span>
        <textarea value={text} maxLength={2000} rows={2} onChange={(e) => (setText(e.target.value), setStatus(''))} />
      </label>
      <div className="feedback-comment-actions">
        <button type="submit" disabled={!changed}>
          Save comment
        </button>
        <span className="small muted" aria-live="polite">
          {status || (saved && !changed ? 'Comment saved.' : '')}
        </span>
      </div>
    </form>
  );
}

/** A thumb icon (drawn, so it shows without an emoji font). */
function Thumb({ down = false }: { down?: boolean }) {
  return (
    <svg aria-hidden="true" width="14" height="14" viewBox="0 0 24 24" style={down ? { transform: 'rotate(180deg)' } : undefined}>
      <path
        fill="currentColor"
        d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3a1.5 1.5 0 0 0-.5-1L13.1 1 6.6 7.6A2 2 0 0 0 6 9v10a2 2 0 0 0 2 2h9a2 2 0 0 0 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z"
      />
    </svg>
  );
}

function StatusNote({ status, role }: { status: LiveStatus; role: string }) {
  if (status === 'cancelled') return <p className="status-note">{role === 'human' ? 'Stopped before an answer.' : 'Stopped — the answer is incomplete.'}</p>;
  if (status === 'failed') return <p className="status-note error">{role === 'human' ? 'No answer: the turn failed.' : 'The answer failed part way.'}</p>;
  return null;
}

/** A chip for each tool an answer used, in the order first called. */
function ToolChips({ names }: { names: string[] }) {
  const unique = [...new Set(names.filter(Boolean))];
  if (unique.length === 0) return null;
  return (
    <ul className="tool-chips" aria-label="Tools used">
      {unique.map((name) => (
        <li key={name} className="tool-chip" title={`The answer used the tool ${name}`}>
          {name}
        </li>
      ))}
    </ul>
  );
}
