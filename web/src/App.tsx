import { useState } from 'react';
import { tokenClaims, tokenStore } from './api';
import { SignIn } from './auth/SignIn';
import { ChatView } from './chat/ChatView';
import { KnowledgeAdmin } from './admin/KnowledgeAdmin';

type View = 'chat' | 'knowledge';

/** The page: sign-in, then the chat and (for admins) the knowledge base. */
export function App() {
  const [token, setToken] = useState<string | null>(() => tokenStore.get());
  const [view, setView] = useState<View>('chat');
  const claims = token ? tokenClaims(token) : null;
  const signOut = () => {
    tokenStore.clear();
    setToken(null);
  };
  if (!token) {
    return (
      <SignIn
        onSignedIn={(value) => {
          tokenStore.set(value);
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
          {isAdmin && (
            <button type="button" aria-pressed={view === 'knowledge'} onClick={() => setView('knowledge')}>
              Knowledge base
            </button>
          )}
        </nav>
        <span className="who" data-testid="signed-in-as">
          {claims?.sub ?? 'signed in'}
          {isAdmin ? ' (admin)' : ''}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main className="workspace">{view === 'knowledge' && isAdmin ? <KnowledgeAdmin /> : <ChatView onUnauthorized={signOut} />}</main>
    </div>
  );
}
