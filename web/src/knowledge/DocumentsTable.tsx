import { type ReactNode, useEffect, useRef, useState } from 'react';
import { type DocumentInfo, fmtBytes } from './uploads';
import '../admin/admin.css';

/**
 * A collection's documents with their page, chunk and leaf counts; with
 * `onDelete` (who may delete: administrators, a collection's editors) each row
 * has a Delete button that asks first.
 */
export function DocumentsTable({ documents, caption, onDelete }: { documents: DocumentInfo[]; caption: string; onDelete?: (doc: DocumentInfo) => void }) {
  const [confirming, setConfirming] = useState<DocumentInfo | null>(null);
  const columns = onDelete ? 7 : 6;
  return (
    <div className="admin-table-wrap">
      <table className="admin-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Pages</th>
            <th scope="col">Chunks</th>
            <th scope="col">Leaves</th>
            <th scope="col">Size</th>
            <th scope="col">Added</th>
            {onDelete && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {documents.length === 0 && (
            <tr>
              <td colSpan={columns}>No documents yet.</td>
            </tr>
          )}
          {documents.map((doc) => (
            <tr key={doc.id} data-testid="document" data-filename={doc.filename}>
              <th scope="row" className="admin-filename">
                {doc.filename}
              </th>
              <td data-label="Pages">{doc.page_count ?? '–'}</td>
              <td data-label="Chunks">{doc.chunk_count}</td>
              <td data-label="Leaves">{doc.leaf_count}</td>
              <td data-label="Size">{fmtBytes(doc.size_bytes)}</td>
              <td data-label="Added">
                <time dateTime={doc.created_at}>{new Date(doc.created_at).toLocaleString()}</time> by {doc.created_by}
              </td>
              {onDelete && (
                <td>
                  <button type="button" onClick={() => setConfirming(doc)} aria-describedby={`doc-${doc.id}`}>
                    Delete
                  </button>
                  <span id={`doc-${doc.id}`} className="visually-hidden">
                    {doc.filename}
                  </span>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {confirming && onDelete && (
        <ConfirmDialog
          label="Delete document"
          confirm="Delete"
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            setConfirming(null);
            onDelete(confirming);
          }}
        >
          Delete <strong>{confirming.filename}</strong> and its {confirming.chunk_count} chunks? Answers will no longer cite it.
        </ConfirmDialog>
      )}
    </div>
  );
}

/** A modal confirmation: focus on Cancel, Escape cancels, focus back to the opener when it closes. */
export function ConfirmDialog({
  label,
  confirm,
  children,
  onCancel,
  onConfirm,
}: {
  label: string;
  confirm: string;
  children: ReactNode;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    cancel.current?.focus();
    return () => opener?.focus();
  }, []);
  return (
    <div className="admin-backdrop">
      <div role="dialog" aria-modal="true" aria-label={label} className="admin-dialog" onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
        <p>{children}</p>
        <div className="admin-dialog-buttons">
          <button type="button" className="danger" onClick={onConfirm}>
            {confirm}
          </button>
          <button type="button" ref={cancel} onClick={onCancel}>
            Cancel
          </button>
        </div>
      </div>
    </div>
  );
}
