import { type FormEvent, useState } from 'react';
import { api, describeError } from '../api';
import { CollectionDetail } from './CollectionDetail';
import { type CollectionInfo, isDefault, useCollections } from './collections';
import type { ErrorBody } from './uploads';
import '../admin/admin.css';
import './knowledge.css';

/**
 * The Knowledge screen, for every signed-in user: the collections they read,
 * with their role and document count; a form to create one; and a
 * collection opened (its documents, upload, sharing, settings).
 */
export function KnowledgeView() {
  const { collections: loaded, error, reload } = useCollections();
  // Deleted here (the server said so): never listed again, even by a list read before the delete.
  const [deletedIds, setDeletedIds] = useState<ReadonlySet<string>>(new Set());
  const collections = loaded?.filter((c) => !deletedIds.has(c.id)) ?? null;
  const [openId, setOpenId] = useState<string | null>(null);
  const opened = collections?.find((c) => c.id === openId) ?? null;

  if (openId && opened) {
    return (
      <div className="admin knowledge">
        <CollectionDetail
          collection={opened}
          onBack={() => {
            setOpenId(null);
            void reload();
          }}
          onChanged={() => void reload()}
          onDeleted={() => {
            setDeletedIds((ids) => new Set([...ids, opened.id]));
            setOpenId(null);
            void reload();
          }}
        />
      </div>
    );
  }
  return (
    <div className="admin knowledge">
      <h2>Knowledge</h2>
      <p className="admin-hint">The collections of documents you can read. Answers in the chat search them and cite what they use.</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {collections === null && !error && <p>Loading…</p>}
      {collections && <CollectionList collections={collections} onOpen={(c) => setOpenId(c.id)} />}
      <CreateCollection
        onCreated={async (created) => {
          await reload();
          setOpenId(created.id);
        }}
      />
    </div>
  );
}

function CollectionList({ collections, onOpen }: { collections: CollectionInfo[]; onOpen(collection: CollectionInfo): void }) {
  return (
    <section className="admin-card">
      <div className="admin-table-wrap">
        <table className="admin-table">
          <caption>Your collections</caption>
          <thead>
            <tr>
              <th scope="col">Collection</th>
              <th scope="col">Your role</th>
              <th scope="col">Documents</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {collections.map((c) => (
              <tr key={c.id} data-testid="collection" data-collection-id={c.id} data-name={c.name}>
                <th scope="row" className="admin-filename">
                  <button type="button" className="link-button" onClick={() => onOpen(c)}>
                    {c.name}
                  </button>
                  {isDefault(c) && <span className="badge-inline">everyone</span>}
                </th>
                <td data-label="Your role" data-testid="role">
                  {c.role}
                </td>
                <td data-label="Documents" data-testid="document-count">
                  {c.document_count}
                </td>
                <td data-label="Description" className="knowledge-description">
                  {c.description || <span className="muted">–</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function CreateCollection({ onCreated }: { onCreated(collection: CollectionInfo): Promise<void> }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setError('Give the collection a name.');
    setPending(true);
    setError(null);
    const {
      data,
      error: failure,
      response,
    } = await api.POST('/api/knowledge/collections', {
      body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
    });
    setPending(false);
    if (failure || !data) return setError(describeError(response.status, failure as ErrorBody | undefined));
    setName('');
    setDescription('');
    await onCreated(data);
  };

  return (
    <section className="admin-card" aria-labelledby="create-collection-heading">
      <h3 id="create-collection-heading">New collection</h3>
      <form className="admin-upload" onSubmit={onSubmit}>
        <label htmlFor="collection-name">Name</label>
        <input id="collection-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
        <label htmlFor="collection-description">Description</label>
        <textarea id="collection-description" value={description} maxLength={2000} rows={2} onChange={(e) => setDescription(e.target.value)} />
        <p className="admin-hint">You become its owner; only you can read it until you share it.</p>
        <button type="submit" className="primary" disabled={pending}>
          Create collection
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </section>
  );
}
