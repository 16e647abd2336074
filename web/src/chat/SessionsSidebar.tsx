import { useEffect, useRef, useState } from 'react';
import type { Schemas } from '../api';

type SessionInfo = Schemas['SessionInfo'];

export interface SessionsSidebarProps {
  sessions: SessionInfo[];
  selectedId: string | null;
  loading: boolean;
  hasMore: boolean;
  query: string;
  onQuery(q: string): void;
  onLoadMore(): void;
  onOpen(session: SessionInfo): void;
  onNewChat(): void;
  onRename(session: SessionInfo, title: string): Promise<void>;
  onDelete(session: SessionInfo): Promise<void>;
}

/** The user's sessions, newest first: search, infinite scroll, rename, delete (after a confirmation), new chat. */
export function SessionsSidebar(props: SessionsSidebarProps) {
  const { sessions, selectedId, loading, hasMore, onLoadMore } = props;
  const [search, setSearch] = useState(props.query);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<SessionInfo | null>(null);
  const sentinel = useRef<HTMLButtonElement>(null);
  const onQuery = props.onQuery;

  useEffect(() => {
    if (search === props.query) return;
    const timer = setTimeout(() => onQuery(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search, props.query, onQuery]);

  // Infinite scroll: the "Load more" button at the end of the list loads the next page when it scrolls into view.
  useEffect(() => {
    const target = sentinel.current;
    if (!target || !hasMore || loading) return;
    const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && onLoadMore());
    observer.observe(target);
    return () => observer.disconnect();
  }, [hasMore, loading, onLoadMore, sessions.length]);

  return (
    <nav aria-label="Sessions" className="sessions">
      <button type="button" className="primary new-chat" onClick={props.onNewChat}>
        New chat
      </button>
      <label className="search">
        <input type="search" aria-label="Search sessions" placeholder="Search sessions" value={search} onChange={(e) => setSearch(e.target.value)} />
      </label>
      <ul className="session-list">
        {sessions.map((session) => (
          <li key={session.session_id} className={session.session_id === selectedId ? 'selected' : undefined} data-session-id={session.session_id}>
            {renaming === session.session_id ? (
              <RenameForm
                title={session.title}
                onCancel={() => setRenaming(null)}
                onSave={async (title) => {
                  await props.onRename(session, title);
                  setRenaming(null);
                }}
              />
            ) : (
              <>
                <button type="button" className="session-open" aria-current={session.session_id === selectedId ? 'page' : undefined} onClick={() => props.onOpen(session)}>
                  <span className="session-title" title={session.title || 'Untitled'}>
                    {session.title || 'Untitled'}
                  </span>
                  {session.pending_hitl && <span className="badge waiting">waiting for you</span>}
                  {session.active_run && <span className="badge running">running</span>}
                </button>
                <div className="session-actions">
                  <button type="button" aria-label="Rename" title={`Rename “${session.title}”`} onClick={() => setRenaming(session.session_id)}>
                    Rename
                  </button>
                  <button type="button" aria-label="Delete" title={`Delete “${session.title}”`} onClick={() => setDeleting(session)}>
                    Delete
                  </button>
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
      {!loading && sessions.length === 0 && <p className="muted">{props.query ? 'No session matches.' : 'No conversations yet.'}</p>}
      {loading && <p className="muted">Loading…</p>}
      {hasMore && !loading && (
        <button type="button" ref={sentinel} className="load-more" onClick={onLoadMore}>
          Load more sessions
        </button>
      )}
      {deleting && (
        <ConfirmDelete
          session={deleting}
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            await props.onDelete(deleting);
            setDeleting(null);
          }}
        />
      )}
    </nav>
  );
}

function RenameForm({ title, onSave, onCancel }: { title: string; onSave(title: string): Promise<void>; onCancel(): void }) {
  const [value, setValue] = useState(title);
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <form
      className="rename"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!value.trim()) return;
        setSaving(true);
        try {
          await onSave(value.trim());
        } catch {
          // the sidebar's owner shows why; the form stays open with the text
        } finally {
          setSaving(false);
        }
      }}
      onKeyDown={(e) => e.key === 'Escape' && onCancel()}
    >
      <input ref={input} aria-label="Session title" value={value} maxLength={200} onChange={(e) => setValue(e.target.value)} />
      <button type="submit" disabled={saving || !value.trim()}>
        Save
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

/** A modal confirmation (the native dialog: focus kept inside, Escape cancels). */
function ConfirmDelete({ session, onConfirm, onCancel }: { session: SessionInfo; onConfirm(): Promise<void>; onCancel(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className="confirm" aria-label="Delete session" onCancel={onCancel}>
      <p>Delete “{session.title || 'Untitled'}” and all its messages? This cannot be undone.</p>
      <div className="confirm-actions">
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              await onConfirm();
            } finally {
              setBusy(false);
            }
          }}
        >
          Delete
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
