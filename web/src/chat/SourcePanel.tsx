import { useEffect, useRef, useState } from 'react';
import { api, ApiError, type Schemas } from '../api';
import type { CollectionInfo } from '../knowledge/collections';
import { chunkPlace } from '../trace';
import { describeFailure, unwrap } from './errors';

type ChunkSource = Schemas['ChunkSourceResponse'];
type ChunkPassage = Schemas['ChunkPassage'];

/** Where a passage is in its document: its page, and its sheet and row or heading path. */
function placeOf(passage: ChunkPassage): string | null {
  const parts = [passage.page !== null ? `page ${passage.page}` : null, chunkPlace(passage)].filter(Boolean);
  return parts.length ? parts.join(', ') : null;
}

type Loaded = { state: 'loading' } | { state: 'gone' } | { state: 'failed'; message: string } | { state: 'ready'; source: ChunkSource };

/**
 * The source of a citation, beside the answer: GET /api/knowledge/chunks/:id
 * read under the user's access (a collection no longer shared answers 404,
 * shown as gone), with its document, collection and place, and the passages
 * around it; the cited one is highlighted. Escape or Close closes it and
 * gives focus back to the citation.
 */
export function SourcePanel({
  chunkId,
  collections,
  onClose,
  onShowTrace,
  onUnauthorized,
}: {
  chunkId: string;
  collections: CollectionInfo[] | null;
  onClose(): void;
  onShowTrace?: () => void;
  onUnauthorized(): void;
}) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const panel = useRef<HTMLElement>(null);
  const close = useRef<HTMLButtonElement>(null);
  const cited = useRef<HTMLElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    // eslint-disable-next-line react-hooks/set-state-in-effect -- each citation opened reads its own source
    setLoaded({ state: 'loading' });
    void api
      .GET('/api/knowledge/chunks/{chunk_id}', { params: { path: { chunk_id: chunkId } }, signal: controller.signal })
      .then((result) => {
        if (controller.signal.aborted) return;
        setLoaded({ state: 'ready', source: unwrap(result, onUnauthorized) });
      })
      .catch((failure: unknown) => {
        if (controller.signal.aborted) return;
        if (failure instanceof ApiError && failure.status === 404) setLoaded({ state: 'gone' });
        else setLoaded({ state: 'failed', message: describeFailure(failure) });
      });
    return () => controller.abort();
  }, [chunkId, onUnauthorized]);

  // Focus into the panel when it opens, back to what opened it (the citation) when it closes.
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    close.current?.focus();
    return () => {
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      // A modal dialog over the page (a confirmation) takes its own Escape.
      if (event.key === 'Escape' && !document.querySelector('dialog[open], [aria-modal="true"]')) onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);

  useEffect(() => {
    if (loaded.state === 'ready') cited.current?.scrollIntoView({ block: 'center' });
  }, [loaded]);

  const source = loaded.state === 'ready' ? loaded.source : null;
  const collection = source ? collections?.find((c) => c.id === source.collection_id) : undefined;
  const place = source ? placeOf(source) : null;
  return (
    <section role="dialog" aria-modal="false" aria-labelledby="source-panel-heading" className="source-panel" ref={panel} data-chunk-id={chunkId}>
      <header className="source-panel-head">
        <h2 id="source-panel-heading">Source</h2>
        <button type="button" ref={close} onClick={onClose}>
          Close
        </button>
      </header>
      {loaded.state === 'loading' && <p className="muted">Loading the source…</p>}
      {loaded.state === 'gone' && (
        <p role="alert" className="source-gone">
          This source is no longer available.
        </p>
      )}
      {loaded.state === 'failed' && (
        <p role="alert" className="error">
          {loaded.message}
        </p>
      )}
      {source && (
        <>
          <dl className="source-facts">
            <dt>Document</dt>
            <dd data-testid="source-document">{source.document.filename}</dd>
            <dt>Collection</dt>
            <dd data-testid="source-collection">{collection?.name ?? source.collection_id}</dd>
            {place && (
              <>
                <dt>Where</dt>
                <dd data-testid="source-place">{place}</dd>
              </>
            )}
          </dl>
          <div className="source-passages" aria-label="Passages of the document">
            {source.before.map((p) => (
              <Passage key={p.chunk_id} passage={p} position="before" />
            ))}
            <p className="source-passage cited" data-testid="cited-passage" data-chunk-id={source.chunk_id}>
              <mark ref={cited} aria-current="true" data-cited="true">
                {source.text}
              </mark>
            </p>
            {source.after.map((p) => (
              <Passage key={p.chunk_id} passage={p} position="after" />
            ))}
          </div>
        </>
      )}
      {onShowTrace && (
        <p>
          <button type="button" onClick={onShowTrace}>
            Show in trace
          </button>
        </p>
      )}
    </section>
  );
}

function Passage({ passage, position }: { passage: ChunkPassage; position: 'before' | 'after' }) {
  const place = placeOf(passage);
  return (
    <p className="source-passage" data-testid="neighbour" data-position={position} data-chunk-id={passage.chunk_id}>
      {place && <span className="source-passage-place">{place}: </span>}
      {passage.text}
    </p>
  );
}
