import { FormEvent, useState } from 'react';
import { api } from '../api';

/**
 * Paste a bearer token (kept in session storage). In development the
 * service also offers `POST /api/dev/token`, which this form uses to mint a
 * token for any user id; that route does not exist in production, and the
 * box says so when it is missing.
 */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (token: string) => void; notice?: string | null }) {
  const [token, setToken] = useState('');
  const [user, setUser] = useState('');
  const [admin, setAdmin] = useState(false);
  const [groups, setGroups] = useState('');
  const [error, setError] = useState<string | null>(null);

  const submitToken = (event: FormEvent) => {
    event.preventDefault();
    const value = token.trim().replace(/^Bearer\s+/i, '');
    if (!value) return setError('Paste a token first.');
    onSignedIn(value);
  };

  const signInAs = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const named = groups
      .split(',')
      .map((group) => group.trim())
      .filter(Boolean);
    const body = { sub: user.trim(), role: admin ? ('admin' as const) : ('user' as const), ...(named.length ? { groups: named } : {}) };
    const result = await api.POST('/api/dev/token', { body }).catch(() => null);
    if (!result) return setError('The service did not answer.');
    if (result.response.status === 404) {
      return setError('"Sign in as" only exists when the service runs in development mode (NODE_ENV=development, no JWT_SECRET).');
    }
    const minted = result.data;
    if (!minted?.token) return setError((result.error as { message?: string } | undefined)?.message ?? `Sign-in failed (${result.response.status}).`);
    onSignedIn(minted.token);
  };

  return (
    <main className="signin">
      <h1>Agentic RAG chat</h1>
      {notice && (
        <p role="alert" className="error">
          {notice}
        </p>
      )}
      <form onSubmit={submitToken} aria-labelledby="token-heading">
        <h2 id="token-heading">Sign in with a token</h2>
        <label htmlFor="token">Bearer token</label>
        <textarea id="token" value={token} onChange={(e) => setToken(e.target.value)} rows={4} spellCheck={false} />
        <button type="submit">Sign in</button>
      </form>
      <form onSubmit={signInAs} aria-labelledby="dev-heading">
        <h2 id="dev-heading">Development: sign in as</h2>
        <label htmlFor="dev-user">User id</label>
        <input id="dev-user" value={user} onChange={(e) => setUser(e.target.value)} autoComplete="username" />
        <label htmlFor="dev-groups">Groups (optional, separated by commas)</label>
        <input id="dev-groups" value={groups} onChange={(e) => setGroups(e.target.value)} placeholder="finance, kb-editors" />
        <label className="inline">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} /> administrator
        </label>
        <button type="submit">Sign in as</button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </main>
  );
}
