import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, describeError } from '../api';
import { AccessList } from './AccessList';
import { type CollectionInfo, isDefault, ROLE_TEXT, roleAllows } from './collections';
import { ConfirmDialog, DocumentsTable } from './DocumentsTable';
import { DocumentUpload } from './DocumentUpload';
import { deleteDocument, type DocumentInfo, type ErrorBody, listDocuments, type UploadTarget } from './uploads';

/**
 * One collection: its documents (editors and owners upload and delete), its
 * name and description (owners edit them), its access list (owners edit it;
 * others see it read-only) and, for owners, deleting it.
 */
export function CollectionDetail({ collection, onBack, onChanged, onDeleted }: { collection: CollectionInfo; onBack(): void; onChanged(): void; onDeleted(): void }) {
  const target: UploadTarget = { kind: 'collection', id: collection.id };
  const canEdit = roleAllows(collection.role, 'editor');
  const isOwner = collection.role === 'owner';
  const [documents, setDocuments] = useState<DocumentInfo[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  const refresh = useCallback(async () => {
    const listed = await listDocuments({ kind: 'collection', id: collection.id });
    if ('error' in listed) return setListError(listed.error);
    setListError(null);
    setDocuments(listed.documents);
  }, [collection.id]);

  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- loading the server's list is what this effect is for
    void refresh();
  }, [refresh]);
  // The screen changed under the user: say so to a screen reader by moving focus to its heading.
  useEffect(() => heading.current?.focus(), [collection.id]);

  const onDelete = async (doc: DocumentInfo) => {
    setDeleteError(null);
    const failure = await deleteDocument(target, doc.id);
    if (failure) setDeleteError(`${doc.filename}: ${failure}`);
    await refresh();
    onChanged();
  };

  return (
    <>
      <div className="knowledge-head">
        <button type="button" onClick={onBack}>
          ← All collections
        </button>
        <h2 ref={heading} tabIndex={-1} data-testid="collection-name">
          {collection.name}
        </h2>
        {collection.description && <p className="knowledge-description">{collection.description}</p>}
        <p className="admin-hint" data-testid="your-role">
          Your role: {ROLE_TEXT[collection.role]}.{!canEdit && ' You can read this collection but not change it.'}
        </p>
      </div>

      {canEdit && (
        <DocumentUpload
          target={target}
          heading="Upload a document"
          onUploaded={(all) => {
            setDocuments(all);
            onChanged();
          }}
        />
      )}

      <section className="admin-card">
        {listError && (
          <p role="alert" className="error">
            {listError}
          </p>
        )}
        {deleteError && (
          <p role="alert" className="error">
            {deleteError}
          </p>
        )}
        {documents === null && !listError && <p>Loading…</p>}
        {documents && <DocumentsTable documents={documents} caption="Documents" onDelete={canEdit ? (doc) => void onDelete(doc) : undefined} />}
      </section>

      <AccessList collection={collection} />

      {isOwner && <CollectionSettings collection={collection} onChanged={onChanged} />}
      {isOwner && !isDefault(collection) && <DeleteCollection collection={collection} onDeleted={onDeleted} />}
    </>
  );
}

function CollectionSettings({ collection, onChanged }: { collection: CollectionInfo; onChanged(): void }) {
  const [name, setName] = useState(collection.name);
  const [description, setDescription] = useState(collection.description);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [pending, setPending] = useState(false);
  const protectedName = isDefault(collection);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSaved(false);
    if (!protectedName && !name.trim()) return setError('A collection needs a name.');
    setPending(true);
    const { error: failure, response } = await api.PATCH('/api/knowledge/collections/{id}', {
      params: { path: { id: collection.id } },
      body: { ...(protectedName ? {} : { name: name.trim() }), description: description.trim() },
    });
    setPending(false);
    if (failure) return setError(describeError(response.status, failure as ErrorBody | undefined));
    setSaved(true);
    onChanged();
  };

  return (
    <section className="admin-card" aria-labelledby="collection-settings-heading">
      <h3 id="collection-settings-heading">Name and description</h3>
      <form className="admin-upload" onSubmit={onSubmit}>
        <label htmlFor="collection-edit-name">Collection name</label>
        <input
          id="collection-edit-name"
          value={name}
          maxLength={100}
          disabled={protectedName}
          aria-describedby={protectedName ? 'collection-edit-name-hint' : undefined}
          onChange={(e) => setName(e.target.value)}
        />
        {protectedName && (
          <p id="collection-edit-name-hint" className="admin-hint">
            The default collection keeps its name.
          </p>
        )}
        <label htmlFor="collection-edit-description">Collection description</label>
        <textarea id="collection-edit-description" value={description} rows={3} maxLength={2000} onChange={(e) => setDescription(e.target.value)} />
        <button type="submit" className="primary" disabled={pending}>
          Save changes
        </button>
      </form>
      <p role="status" className="admin-hint">
        {saved ? 'Saved.' : ''}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </section>
  );
}

function DeleteCollection({ collection, onDeleted }: { collection: CollectionInfo; onDeleted(): void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setConfirming(false);
    setError(null);
    const { error: failure, response } = await api.DELETE('/api/knowledge/collections/{id}', { params: { path: { id: collection.id } } });
    if (failure) return setError(describeError(response.status, failure as ErrorBody | undefined));
    onDeleted();
  };
  return (
    <section className="admin-card knowledge-danger" aria-labelledby="delete-collection-heading">
      <h3 id="delete-collection-heading">Delete this collection</h3>
      <p className="admin-hint">Its documents go with it, for everyone it is shared with. This cannot be undone.</p>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete collection
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {confirming && (
        <ConfirmDialog label="Delete collection" confirm="Delete collection" onCancel={() => setConfirming(false)} onConfirm={() => void remove()}>
          Delete <strong>{collection.name}</strong> with its {collection.document_count} documents? Nobody will be able to read it or cite it again.
        </ConfirmDialog>
      )}
    </section>
  );
}
