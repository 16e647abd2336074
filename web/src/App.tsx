import { useCallback, useEffect, useState } from 'react';
import { draftStore, onUnauthorized, tokenClaims, tokenStore } from './api';
import { SignIn } from './auth/SignIn';
import { ChatView } from './chat/ChatView';
import { KnowledgeAdmin } from './admin/KnowledgeAdmin';
import { KnowledgeView } from './knowledge/KnowledgeView';

type View = 'chat' | 'knowledge' | 'admin';

/** The page: sign-in, then the chat, the knowledge collections and (for admins) the default collection's administration. */
export function App() {
  const [token, setToken] = useState<string | null>(() => tokenStore.get());
  const [view, setView] = useState<View>('chat');
  const [notice, setNotice] = useState<string | null>(null);
  const claims = token ? tokenClaims(token) : null;
  const signOut = () => {
    tokenStore.clear();
    draftStore.set(''); // the next person at this tab does not see what was being typed
    setNotice(null);
    setToken(null);
  };
  // A refused token (malformed, expired, revoked) sends the user to sign in again, saying why the service refused it
  // (the 401's message); the typed text is kept (draftStore) and the notice says so only when there is some.
  // Several calls may be refused at once: the first with a reason names it, the others do not blur it.
  const expired = useCallback((reason?: string) => {
    tokenStore.clear();
    setNotice((current) => {
      if (current && !reason) return current;
      const why = reason ? `The service refused your sign-in: ${reason.replace(/\.?$/, '.')}` : 'The service refused your sign-in.';
      return `${why} Sign in again.${draftStore.get().trim() ? ' What you were typing is kept.' : ''}`;
    });
    setToken(null);
  }, []);
  useEffect(() => onUnauthorized(expired), [expired]);
  if (!token) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(value) => {
          tokenStore.set(value);
          setNotice(null);
          setToken(value);
        }}
      />
    );
  }
  const isAdmin = claims?.role === 'admin';
  return (
    <div className="app">
      <header className="topbar">
        <h1>Agentic RAG chat</h1>
        <nav aria-label="Views">
          <button type="button" aria-pressed={view === 'chat'} onClick={() => setView('chat')}>
            Chat
          </button>
          <button type="button" aria-pressed={view === 'knowledge'} onClick={() => setView('knowledge')}>
            Knowledge
          </button>
          {isAdmin && (
            <button type="button" aria-pressed={view === 'admin'} onClick={() => setView('admin')} title="Administer the default collection">
              Knowledge base (admin)
            </button>
          )}
        </nav>
        <span className="who" data-testid="signed-in-as">
          {claims?.sub ?? 'signed in'}
          {isAdmin ? ' (admin)' : ''}
        </span>
        <button type="button" className="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main className="workspace">{view === 'admin' && isAdmin ? <KnowledgeAdmin /> : view === 'knowledge' ? <KnowledgeView /> : <ChatView onUnauthorized={expired} />}</main>
    </div>
  );
}
