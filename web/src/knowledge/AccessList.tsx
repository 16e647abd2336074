import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, describeError } from '../api';
import { type AccessEntry, type CollectionInfo, type CollectionRole, describePrincipal, ROLES } from './collections';
import type { ErrorBody } from './uploads';

type Kind = 'user' | 'group' | 'everyone';

/**
 * Who may read or change a collection. Its owners add `user:<id>`,
 * `group:<name>` or `everyone` with a role, change roles and remove entries;
 * each change replaces the whole list (PUT) at once. Viewers and editors see
 * the list read-only.
 */
export function AccessList({ collection }: { collection: CollectionInfo }) {
  const editable = collection.role === 'owner';
  const [entries, setEntries] = useState<AccessEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [pending, setPending] = useState(false);

  const load = useCallback(async () => {
    const { data, error: failure, response } = await api.GET('/api/knowledge/collections/{id}/access', { params: { path: { id: collection.id } } });
    if (failure || !data) return setError(describeError(response.status, failure as ErrorBody | undefined));
    setEntries(data.entries);
  }, [collection.id]);

  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- loading the server's list is what this effect is for
    void load();
  }, [load]);

  /** Saves the whole new list; true when the service took it. */
  const save = async (next: AccessEntry[], done: string): Promise<boolean> => {
    setPending(true);
    setError(null);
    setStatus('');
    const {
      data,
      error: failure,
      response,
    } = await api.PUT('/api/knowledge/collections/{id}/access', {
      params: { path: { id: collection.id } },
      body: { entries: next },
    });
    setPending(false);
    if (failure || !data) {
      setError(describeError(response.status, failure as ErrorBody | undefined));
      return false;
    }
    setEntries(data.entries);
    setStatus(done);
    return true;
  };

  return (
    <section className="admin-card" aria-labelledby="access-heading">
      <h3 id="access-heading">Sharing</h3>
      {!editable && <p className="admin-hint">Only the collection's owners can change who has access.</p>}
      {entries === null && !error && <p>Loading…</p>}
      {entries && (
        <ul className="access-list" aria-label="Access list">
          {entries.map((entry) => {
            const who = describePrincipal(entry.principal);
            return (
              <li key={entry.principal} data-testid="access-entry" data-principal={entry.principal} data-role={entry.role}>
                <span className="access-who">{who}</span>
                {editable ? (
                  <>
                    <label className="visually-hidden" htmlFor={`role-${entry.principal}`}>
                      Role of {who}
                    </label>
                    <select
                      id={`role-${entry.principal}`}
                      value={entry.role}
                      disabled={pending}
                      onChange={(e) =>
                        void save(
                          entries.map((other) => (other.principal === entry.principal ? { ...other, role: e.target.value as CollectionRole } : other)),
                          `${who} is now ${e.target.value}.`,
                        )
                      }
                    >
                      {ROLES.map((role) => (
                        <option key={role} value={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                    <button
                      type="button"
                      disabled={pending}
                      aria-label={`Remove ${who}`}
                      onClick={() =>
                        void save(
                          entries.filter((other) => other.principal !== entry.principal),
                          `Removed ${who}.`,
                        )
                      }
                    >
                      Remove
                    </button>
                  </>
                ) : (
                  <span className="access-role">{entry.role}</span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {editable && entries && <AddEntry entries={entries} pending={pending} onAdd={(entry, done) => save([...entries, entry], done)} onProblem={setError} />}
      <p role="status" className="admin-hint">
        {status}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </section>
  );
}

function AddEntry({
  entries,
  pending,
  onAdd,
  onProblem,
}: {
  entries: AccessEntry[];
  pending: boolean;
  onAdd(entry: AccessEntry, done: string): Promise<boolean>;
  onProblem(problem: string | null): void;
}) {
  const [kind, setKind] = useState<Kind>('group');
  const [name, setName] = useState('');
  const [role, setRole] = useState<CollectionRole>('viewer');

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (kind !== 'everyone' && !trimmed) return onProblem(kind === 'user' ? 'Type the user id to share with.' : 'Type the group name to share with.');
    const principal = kind === 'everyone' ? 'everyone' : `${kind}:${trimmed}`;
    if (entries.some((e) => e.principal === principal)) return onProblem(`${describePrincipal(principal)} is already in the list: change the role there.`);
    if (await onAdd({ principal, role }, `Shared with ${describePrincipal(principal)} as ${role}.`)) setName('');
  };

  return (
    <form className="access-add" onSubmit={onSubmit} aria-label="Add to the access list">
      <div className="access-field">
        <label htmlFor="share-kind">Share with</label>
        <select id="share-kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
          <option value="user">a user</option>
          <option value="group">a group</option>
          <option value="everyone">everyone signed in</option>
        </select>
      </div>
      {kind !== 'everyone' && (
        <div className="access-field access-name">
          <label htmlFor="share-name">{kind === 'user' ? 'User id' : 'Group name'}</label>
          <input id="share-name" value={name} maxLength={128} autoComplete="off" onChange={(e) => setName(e.target.value)} />
        </div>
      )}
      <div className="access-field">
        <label htmlFor="share-role">Role</label>
        <select id="share-role" value={role} onChange={(e) => setRole(e.target.value as CollectionRole)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" className="primary" disabled={pending}>
        Add
      </button>
    </form>
  );
}
