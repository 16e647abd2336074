import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, describeError, type Schemas } from '../api';
import { DocumentsTable } from '../knowledge/DocumentsTable';
import { DocumentUpload } from '../knowledge/DocumentUpload';
import { deleteDocument, type DocumentInfo, type ErrorBody, listDocuments, type UploadTarget } from '../knowledge/uploads';
import { chunkPlace, TraceViewer } from '../trace';
import './admin.css';

type SearchResponse = Schemas['KnowledgeSearchResponse'];
/** A search candidate: its rank in each recall leg (null: that leg missed it), its fused rank and its rerank score. */
type Candidate = Schemas['RetrievedChunk'];

/** The administrators' screen manages the default collection through its own routes (/api/knowledge/documents). */
const DEFAULT_TARGET: UploadTarget = { kind: 'default' };

function fmtScore(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

/**
 * The knowledge base for administrators: the `default` collection (the one
 * every signed-in user reads) with upload, its document list and delete, and
 * a search tester over every collection the administrator reads. Other
 * collections are managed in the Knowledge screen.
 */
export function KnowledgeAdmin() {
  const [documents, setDocuments] = useState<DocumentInfo[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [deleteError, setDeleteError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    const listed = await listDocuments(DEFAULT_TARGET);
    if ('error' in listed) return setListError(listed.error);
    setListError(null);
    setDocuments(listed.documents);
  }, []);

  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- loading the server's list is what this effect is for
    void refresh();
  }, [refresh]);

  const onDelete = async (doc: DocumentInfo) => {
    setDeleteError(null);
    const failure = await deleteDocument(DEFAULT_TARGET, doc.id);
    if (failure) setDeleteError(`${doc.filename}: ${failure}`);
    await refresh();
  };

  return (
    <div className="admin">
      <h2>Knowledge base: the default collection</h2>
      <p className="admin-hint">
        The <strong>default</strong> collection is read by every signed-in user. Collections of your own, and sharing, are in the Knowledge screen.
      </p>

      <DocumentUpload target={DEFAULT_TARGET} heading="Upload a document to the default collection" onUploaded={setDocuments} />

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
        {documents && <DocumentsTable documents={documents} caption="Documents" onDelete={(doc) => void onDelete(doc)} />}
      </section>

      <SearchTester />
    </div>
  );
}

/** Retrieval only (POST /api/knowledge/search): each candidate with its ranks and scores, and the search's trace. */
function SearchTester() {
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState('');
  const [result, setResult] = useState<SearchResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [showTrace, setShowTrace] = useState(false);

  const onSearch = async (event: FormEvent) => {
    event.preventDefault();
    if (!query.trim()) return setError('Type a query first.');
    setPending(true);
    setError(null);
    const k = Number(topK);
    const {
      data,
      error: failure,
      response,
    } = await api.POST('/api/knowledge/search', {
      body: { query, ...(topK && Number.isInteger(k) ? { top_k: k } : {}) },
    });
    setPending(false);
    if (failure || !data) return setError(describeError(response.status, failure as ErrorBody | undefined));
    setResult(data);
  };

  const candidates = (result?.chunks ?? []) as Candidate[];
  const maxScore = Math.max(0, ...candidates.map((c) => c.score ?? 0));
  const maxRerank = Math.max(1, ...candidates.map((c) => c.rerank_score ?? 0));
  const trace = result?.rag_trace;
  return (
    <section className="admin-card" aria-labelledby="search-heading">
      <h3 id="search-heading">Search tester</h3>
      <form onSubmit={onSearch} className="admin-search">
        <div className="admin-search-query">
          <label htmlFor="test-query">Test query</label>
          <input id="test-query" value={query} onChange={(e) => setQuery(e.target.value)} maxLength={2000} />
        </div>
        <div className="admin-search-k">
          <label htmlFor="test-top-k">Top k</label>
          <input id="test-top-k" type="number" min={1} max={50} value={topK} onChange={(e) => setTopK(e.target.value)} placeholder="default" />
        </div>
        <button type="submit" className="primary" disabled={pending}>
          Search
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {result && (
        <>
          <p className="admin-hint" role="status">
            {candidates.length} candidates
            {trace?.pipeline_id ? ` · pipeline ${trace.pipeline_id}` : ''}
            {trace?.recalled_count !== undefined ? ` · ${trace.recalled_count} recalled` : ''}
            {trace?.rerank_applied ? ` · reranked by ${trace.rerank_model ?? 'the reranker'}` : trace?.rerank_enabled === false ? ' · rerank off' : ''}
            {trace?.rerank_error ? ` · rerank error: ${trace.rerank_error}` : ''}
            {trace?.full_text_error ? ` · full-text error: ${trace.full_text_error}` : ''}
          </p>
          {candidates.length > 0 && <p className="admin-hint">A rank of – means that recall leg did not find the chunk.</p>}
          <div className="admin-table-wrap">
            <table className="admin-table admin-results">
              <caption>Search results</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Source</th>
                  <th scope="col">Where</th>
                  <th scope="col">Full-text rank</th>
                  <th scope="col">Dense rank</th>
                  <th scope="col">RRF rank</th>
                  <th scope="col">RRF score</th>
                  <th scope="col">Rerank score</th>
                </tr>
              </thead>
              <tbody>
                {candidates.length === 0 && (
                  <tr>
                    <td colSpan={8}>Nothing found{trace?.final_empty ? ' above the relevance threshold' : ''}.</td>
                  </tr>
                )}
                {candidates.map((c, i) => (
                  <tr key={`${c.chunk_id ?? c.source}-${i}`} data-testid="candidate">
                    <td data-label="Position">{i + 1}</td>
                    <th scope="row" className="admin-filename">
                      {c.source}
                      {c.text && (
                        <details>
                          <summary>Text</summary>
                          <p className="admin-chunk-text">{c.text}</p>
                        </details>
                      )}
                    </th>
                    <td data-label="Where">{c.page !== null && c.page !== undefined ? `page ${c.page}` : (chunkPlace(c) ?? '–')}</td>
                    <td data-label="Full-text rank" data-testid="full-text-rank">
                      {c.fulltext_rank ?? '–'}
                    </td>
                    <td data-label="Dense rank" data-testid="dense-rank">
                      {c.dense_rank ?? '–'}
                    </td>
                    <td data-label="RRF rank" data-testid="rrf-rank">
                      {c.rrf_rank ?? '–'}
                    </td>
                    <td data-label="RRF score">
                      <ScoreBar value={c.score} max={maxScore} name="RRF score" />
                    </td>
                    <td data-label="Rerank score" data-testid="rerank-score">
                      <ScoreBar value={c.rerank_score} max={maxRerank} name="Rerank score" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {trace && (
            <button type="button" onClick={() => setShowTrace(true)}>
              Show search trace
            </button>
          )}
          {trace && showTrace && <TraceViewer trace={trace} onClose={() => setShowTrace(false)} />}
        </>
      )}
    </section>
  );
}

function ScoreBar({ value, max, name }: { value: number | null | undefined; max: number; name: string }) {
  if (value === null || value === undefined) return <span>–</span>;
  const pct = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0;
  return (
    <span className="admin-bar-row">
      <span className="admin-bar" role="img" aria-label={`${name} ${fmtScore(value)}`}>
        <span className="admin-bar-fill" style={{ width: `${pct}%` }} />
      </span>
      <span aria-hidden="true">{fmtScore(value)}</span>
    </span>
  );
}
