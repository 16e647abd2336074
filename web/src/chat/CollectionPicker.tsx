import { useId, useState } from 'react';
import type { CollectionInfo } from '../knowledge/collections';

/** Most collections one turn may name (the service's limit). */
const MAX_CHOSEN = 50;

/** What a turn searches in words: every readable collection, or the names of those chosen (their count while the list loads). */
function summary(value: string[] | null, collections: CollectionInfo[] | null): string {
  if (value === null) return 'all collections you can read';
  if (collections === null) return value.length === 1 ? '1 collection' : `${value.length} collections`;
  const names = value.map((id) => collections?.find((c) => c.id === id)?.name ?? 'an unavailable collection');
  return names.length <= 2 ? names.join(' and ') : `${names.slice(0, 2).join(', ')} and ${names.length - 2} more`;
}

/**
 * Which knowledge collections the conversation's turns search: "All" (null,
 * the default: every collection the user can read, as the service decides
 * at each turn) or the ones ticked. Unticking the last one goes back to All.
 * A saved choice naming a collection no longer shared is shown, so it can be
 * unticked.
 */
export function CollectionPicker({
  collections,
  value,
  onChange,
  onExpand,
  status,
  disabled,
}: {
  collections: CollectionInfo[] | null;
  value: string[] | null;
  onChange(next: string[] | null): void;
  onExpand(): void;
  status: string;
  disabled?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const chosen = new Set(value ?? []);
  const known = new Set((collections ?? []).map((c) => c.id));
  const unavailable = (value ?? []).filter((v) => collections && !known.has(v));
  const full = chosen.size >= MAX_CHOSEN;

  const toggle = (collectionId: string) => {
    if (value === null) return onChange([collectionId]);
    const next = value.includes(collectionId) ? value.filter((v) => v !== collectionId) : [...value, collectionId];
    onChange(next.length ? next : null);
  };

  return (
    <div className="collection-picker" data-testid="collection-picker">
      <div className="collection-picker-bar">
        <button
          type="button"
          className="collection-picker-toggle"
          aria-expanded={open}
          aria-controls={`${id}-panel`}
          onClick={() => {
            if (!open) onExpand();
            setOpen(!open);
          }}
        >
          Searching: <span data-testid="collection-summary">{summary(value, collections)}</span>
        </button>
        <span role="status" className="muted small" data-testid="collection-status">
          {status}
        </span>
      </div>
      {open && (
        <fieldset id={`${id}-panel`} className="collection-picker-panel" disabled={disabled}>
          <legend>Collections to search</legend>
          <label className="collection-option">
            <input type="checkbox" checked={value === null} onChange={() => value !== null && onChange(null)} />
            All collections you can read
          </label>
          {collections === null && <p className="muted small">Loading collections…</p>}
          {collections?.map((c) => (
            <label key={c.id} className="collection-option" data-collection-id={c.id}>
              <input type="checkbox" checked={chosen.has(c.id)} disabled={!chosen.has(c.id) && full} onChange={() => toggle(c.id)} />
              <span className="collection-option-name">{c.name}</span>
              <span className="muted small">
                {c.role}, {c.document_count} {c.document_count === 1 ? 'document' : 'documents'}
              </span>
            </label>
          ))}
          {unavailable.map((missing) => (
            <label key={missing} className="collection-option">
              <input type="checkbox" checked onChange={() => toggle(missing)} />
              <span className="collection-option-name">A collection no longer shared with you</span>
              <span className="muted small">untick it to search again</span>
            </label>
          ))}
        </fieldset>
      )}
    </div>
  );
}
