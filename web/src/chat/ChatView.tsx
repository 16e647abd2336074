import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type Schemas } from '../api';
import { Conversation } from './Conversation';
import { describeFailure, unwrap } from './errors';
import { SessionsSidebar } from './SessionsSidebar';
import './chat.css';

type SessionInfo = Schemas['SessionInfo'];

const LIST_PAGE = 30;
const HASH_PREFIX = '#session=';

/** The session named in the address (`#session=<id>`), so a reload comes back to it. */
function sessionFromHash(): string | null {
  const hash = window.location.hash;
  if (!hash.startsWith(HASH_PREFIX)) return null;
  const raw = hash.slice(HASH_PREFIX.length);
  // Only an id as the page writes it: anything else (a malformed escape, a script-looking value) opens a new chat.
  return /^[0-9a-f-]{36}$/i.test(raw) ? raw.toLowerCase() : null;
}

function setHash(id: string | null): void {
  const url = `${window.location.pathname}${window.location.search}${id ? HASH_PREFIX + id : ''}`;
  window.history.replaceState(null, '', url);
}

interface Opened {
  id: string | null;
  info: SessionInfo | null;
  nonce: number;
}

/** The chat: the sessions sidebar beside the open conversation. */
export function ChatView({ onUnauthorized }: { onUnauthorized: (reason?: string) => void }) {
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [query, setQuery] = useState('');
  const [opened, setOpened] = useState<Opened | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const listRequest = useRef(0);
  const queryRef = useRef(query);
  useEffect(() => {
    queryRef.current = query;
  }, [query]);

  const fetchPage = useCallback(
    async (q: string, after: string | null) => {
      const result = await api.GET('/api/sessions', {
        params: { query: { limit: LIST_PAGE, ...(after ? { cursor: after } : {}), ...(q ? { q } : {}) } },
      });
      return unwrap(result, onUnauthorized);
    },
    [onUnauthorized],
  );

  /** Reloads the first page of the list (after a turn, a rename, a delete, a new search). */
  const refresh = useCallback(
    async (q: string = queryRef.current): Promise<SessionInfo[] | null> => {
      const request = ++listRequest.current;
      setLoading(true);
      try {
        const page = await fetchPage(q, null);
        if (request !== listRequest.current) return null;
        setSessions(page.sessions);
        setCursor(page.next_cursor);
        return page.sessions;
      } catch (failure) {
        if (request === listRequest.current) setError(describeFailure(failure));
        return null;
      } finally {
        if (request === listRequest.current) setLoading(false);
      }
    },
    [fetchPage],
  );

  const loadMore = useCallback(async () => {
    if (!cursor) return;
    const request = ++listRequest.current;
    setLoading(true);
    try {
      const page = await fetchPage(queryRef.current, cursor);
      if (request !== listRequest.current) return;
      setSessions((all) => [...all, ...page.sessions.filter((s) => !all.some((a) => a.session_id === s.session_id))]);
      setCursor(page.next_cursor);
    } catch (failure) {
      if (request === listRequest.current) setError(describeFailure(failure));
    } finally {
      if (request === listRequest.current) setLoading(false);
    }
  }, [cursor, fetchPage]);

  const open = useCallback((id: string | null, info: SessionInfo | null, byUser = true) => {
    setHash(id);
    if (byUser) setDrawerOpen(false); // on a phone, the chosen conversation replaces the list
    setOpened((current) => ({ id, info, nonce: (current?.nonce ?? 0) + 1 }));
  }, []);

  const startOver = useCallback(() => open(null, null, false), [open]);

  // On load: the session in the address, else the newest one with a run still going (rejoined), else a new chat.
  useEffect(() => {
    let cancelled = false;
    // eslint-disable-next-line react-hooks/set-state-in-effect -- loading the server's session list is what this effect is for
    void refresh('').then(async (list) => {
      if (cancelled) return;
      const wanted = sessionFromHash();
      let info = (wanted ? list?.find((s) => s.session_id === wanted) : list?.find((s) => s.active_run)) ?? null;
      if (wanted && !info) {
        // Deeper in the list than its first page: read it alone, for its run in flight (a 404 starts a new chat).
        const result = await api.GET('/api/sessions/{session_id}', { params: { path: { session_id: wanted } } });
        if (cancelled) return;
        info = result.data ?? null;
      }
      open(wanted ?? info?.session_id ?? null, info, false);
    });
    return () => {
      cancelled = true;
    };
  }, [refresh, open]);

  const onQuery = useCallback(
    (q: string) => {
      setQuery(q);
      void refresh(q);
    },
    [refresh],
  );

  const onSessionStarted = useCallback(
    (id: string) => {
      setHash(id);
      setOpened((current) => (current ? { ...current, id } : current));
      void refresh();
    },
    [refresh],
  );

  const onTurnSettled = useCallback(() => void refresh(), [refresh]);

  // A change the conversation saved (its collections): the list keeps it, so the session opened again from the list restores it.
  const onSessionUpdated = useCallback((updated: SessionInfo) => {
    setSessions((all) => all.map((s) => (s.session_id === updated.session_id ? updated : s)));
    setOpened((current) => (current && current.id === updated.session_id ? { ...current, info: updated } : current));
  }, []);

  const rename = async (session: SessionInfo, title: string) => {
    try {
      const result = await api.PATCH('/api/sessions/{session_id}', { params: { path: { session_id: session.session_id } }, body: { title } });
      const updated = unwrap(result, onUnauthorized);
      setSessions((all) => all.map((s) => (s.session_id === updated.session_id ? updated : s)));
      setError(null);
    } catch (failure) {
      setError(describeFailure(failure));
      throw failure;
    }
  };

  const remove = async (session: SessionInfo) => {
    try {
      const result = await api.DELETE('/api/sessions/{session_id}', { params: { path: { session_id: session.session_id } } });
      unwrap(result, onUnauthorized);
      setSessions((all) => all.filter((s) => s.session_id !== session.session_id));
      if (opened?.id === session.session_id) open(null, null);
      setError(null);
    } catch (failure) {
      setError(describeFailure(failure));
    }
  };

  return (
    <div className={`chat${drawerOpen ? ' drawer-open' : ''}`}>
      <button type="button" className="drawer-toggle" aria-expanded={drawerOpen} aria-controls="chat-sessions" onClick={() => setDrawerOpen((v) => !v)}>
        Sessions
      </button>
      <div id="chat-sessions" className="chat-sidebar">
        <SessionsSidebar
          sessions={sessions}
          selectedId={opened?.id ?? null}
          loading={loading}
          hasMore={!!cursor}
          query={query}
          onQuery={onQuery}
          onLoadMore={loadMore}
          onOpen={(session) => open(session.session_id, session)}
          onNewChat={() => open(null, null)}
          onRename={rename}
          onDelete={remove}
        />
        {error && (
          <div role="alert" className="error-banner">
            <span>{error}</span>
            <button type="button" aria-label="Dismiss error" onClick={() => setError(null)}>
              ×
            </button>
          </div>
        )}
      </div>
      {opened && (
        <Conversation
          sessionId={opened.id}
          session={opened.info}
          openNonce={opened.nonce}
          onSessionStarted={onSessionStarted}
          onTurnSettled={onTurnSettled}
          onUnauthorized={onUnauthorized}
          onSessionGone={startOver}
          onSessionUpdated={onSessionUpdated}
        />
      )}
    </div>
  );
}
