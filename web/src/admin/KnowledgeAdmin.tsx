import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { API_BASE, api, describeError, type Schemas, tokenRefused, tokenStore } from '../api';
import { chunkPlace, TraceViewer } from '../trace';
import './admin.css';

type DocumentInfo = Schemas['KnowledgeDocumentInfo'];
type UploadResponse = Schemas['DocumentUploadResponse'];
type IngestJob = Schemas['IngestJobInfo'];
type SearchResponse = Schemas['KnowledgeSearchResponse'];
type ErrorBody = Schemas['ApiErrorBody'];
/** A search candidate: its rank in each recall leg (null: that leg missed it), its fused rank and its rerank score. */
type Candidate = Schemas['RetrievedChunk'];

const ACCEPT = [
  '.txt,.md,.pdf,.docx,.xlsx,.csv,.html,.htm',
  'text/plain,text/markdown,application/pdf,text/csv,text/html',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
].join(',');

/** How often a running ingest job is read again. */
const JOB_POLL_MS = 500;

/** Reads the job until it has completed, failed or been cancelled (its document deleted meanwhile), reporting each state. */
async function followJob(id: string, onJob: (job: IngestJob) => void): Promise<IngestJob> {
  for (;;) {
    const { data, error, response } = await api.GET('/api/knowledge/jobs/{id}', { params: { path: { id } } });
    if (error || !data) throw new Error(describeError(response.status, error as ErrorBody | undefined));
    onJob(data);
    if (data.status === 'completed' || data.status === 'failed' || data.status === 'cancelled') return data;
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}

const STAGE_LABEL: Record<string, string> = { parsing: 'parsing', embedding: 'embedding', storing: 'storing', indexing: 'indexing' };

function describeJob(job: IngestJob | undefined): string {
  if (!job || job.status === 'queued') return 'Uploaded; waiting for a worker…';
  if (job.status !== 'active' || !job.stage) return `Job ${job.status}…`;
  const counted = job.progress.total > 1 ? ` ${job.progress.done} of ${job.progress.total}` : '';
  return `Uploaded; ${STAGE_LABEL[job.stage] ?? job.stage}${counted}…`;
}

/** The job's share done over all stages, 0..1. */
function jobShare(job: IngestJob | undefined): number {
  if (!job) return 0;
  if (job.status === 'completed') return 1;
  const weights: Record<string, [number, number]> = { parsing: [0, 0.05], embedding: [0.05, 0.6], storing: [0.65, 0.3], indexing: [0.95, 0.05] };
  const [start, share] = job.stage ? (weights[job.stage] ?? [0, 0]) : [0, 0];
  return start + share * (job.progress.total > 0 ? job.progress.done / job.progress.total : 0);
}

type Upload =
  | { phase: 'idle' }
  | { phase: 'sending'; loaded: number; total: number }
  | { phase: 'indexing'; loaded: number; total: number; job?: IngestJob }
  | { phase: 'done'; loaded: number; total: number; result: { duplicate: boolean; document: DocumentInfo } }
  | { phase: 'failed'; loaded: number; total: number; message: string };

/** POST /api/knowledge/documents with upload progress (fetch has none), typed with the client's schema. */
function uploadDocument(file: File, onProgress: (loaded: number, total: number) => void): Promise<{ status: number; body: UploadResponse | ErrorBody | undefined }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API_BASE}/api/knowledge/documents`);
    xhr.setRequestHeader('Authorization', `Bearer ${tokenStore.get() ?? ''}`);
    xhr.responseType = 'json';
    xhr.upload.addEventListener('progress', (e) => e.lengthComputable && onProgress(e.loaded, e.total));
    xhr.upload.addEventListener('load', (e) => onProgress(e.total || e.loaded, e.total || e.loaded));
    xhr.addEventListener('load', () => {
      if (xhr.status === 401) tokenRefused(); // as every typed call does (api.ts): back to sign-in
      resolve({ status: xhr.status, body: (xhr.response ?? undefined) as UploadResponse | ErrorBody | undefined });
    });
    xhr.addEventListener('error', () => reject(new Error('The service did not answer.')));
    xhr.addEventListener('abort', () => reject(new Error('The upload was cancelled.')));
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function fmtScore(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

/** The knowledge base for administrators: upload, the document list, delete, and a search tester. */
export function KnowledgeAdmin() {
  const [documents, setDocuments] = useState<DocumentInfo[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [upload, setUpload] = useState<Upload>({ phase: 'idle' });
  const [file, setFile] = useState<File | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const [confirming, setConfirming] = useState<DocumentInfo | null>(null);
  const [deleteError, setDeleteError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    // Newest first, a page at a time.
    const all: DocumentInfo[] = [];
    let cursor: string | undefined;
    do {
      const { data, error, response } = await api.GET('/api/knowledge/documents', { params: { query: { cursor } } });
      if (error || !data) return setListError(describeError(response.status, error as ErrorBody | undefined));
      all.push(...data.documents);
      cursor = data.next_cursor ?? undefined;
    } while (cursor);
    setListError(null);
    setDocuments(all);
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const onUpload = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    setUpload({ phase: 'sending', loaded: 0, total: file.size });
    try {
      const { status, body } = await uploadDocument(file, (loaded, total) =>
        // Once every byte is sent the server parses, chunks and embeds the document.
        setUpload({ phase: loaded >= total ? 'indexing' : 'sending', loaded, total }),
      );
      const sent = (u: Upload) => ({ loaded: u.phase === 'idle' ? 0 : u.loaded, total: u.phase === 'idle' ? file.size : u.total });
      const fail = (message: string) => setUpload((u) => ({ phase: 'failed', ...sent(u), message }));
      const reply = body as UploadResponse | undefined;
      if (status === 200 && reply?.document) {
        setUpload((u) => ({ phase: 'done', ...sent(u), result: { duplicate: true, document: reply.document! } }));
        return;
      }
      if (status !== 202 || !reply?.job) return fail(describeError(status, body as ErrorBody | undefined));
      // Stored and queued: a worker parses, chunks and embeds it; its job says how far it got.
      const job = await followJob(reply.job.id, (current) => setUpload((u) => ({ phase: 'indexing', ...sent(u), job: current })));
      if (job.status === 'failed') return fail(job.error?.message ?? 'the ingest job failed');
      if (job.status === 'cancelled') return fail('the document was deleted before its ingest ended; nothing is stored');
      const { data } = await api.GET('/api/knowledge/documents');
      const document = data?.documents.find((d) => d.id === job.document_id);
      if (!document) return fail('the document was stored, but it is not listed (deleted meanwhile?)');
      setUpload((u) => ({ phase: 'done', ...sent(u), result: { duplicate: job.duplicate ?? false, document } }));
      setFile(null);
      if (fileInput.current) fileInput.current.value = '';
      await refresh();
    } catch (error) {
      setUpload((u) => ({ phase: 'failed', loaded: u.phase === 'idle' ? 0 : u.loaded, total: file.size, message: (error as Error).message }));
    }
  };

  const onDelete = async (doc: DocumentInfo) => {
    setConfirming(null);
    setDeleteError(null);
    const { error, response } = await api.DELETE('/api/knowledge/documents/{id}', { params: { path: { id: doc.id } } });
    if (error) setDeleteError(`${doc.filename}: ${describeError(response.status, error as ErrorBody | undefined)}`);
    await refresh();
  };

  const busy = upload.phase === 'sending' || upload.phase === 'indexing';
  return (
    <div className="admin">
      <h2>Knowledge base</h2>

      <section className="admin-card" aria-labelledby="upload-heading">
        <h3 id="upload-heading">Upload a document</h3>
        <form onSubmit={onUpload} className="admin-upload">
          <label htmlFor="document-file">Document file</label>
          <input
            id="document-file"
            ref={fileInput}
            type="file"
            accept={ACCEPT}
            aria-describedby="document-file-hint"
            onChange={(e) => {
              setFile(e.target.files?.[0] ?? null);
              setUpload({ phase: 'idle' });
            }}
          />
          <p id="document-file-hint" className="admin-hint">
            .txt, .md, .pdf, .docx, .xlsx, .csv or .html; identical content is not stored twice.
          </p>
          <button type="submit" className="primary" disabled={!file || busy}>
            Upload
          </button>
        </form>
        {upload.phase !== 'idle' && (
          <div className="admin-progress">
            <progress aria-label="Upload progress" max={upload.total || 1} value={upload.loaded} />
            {(upload.phase === 'indexing' || upload.phase === 'done') && (
              <progress aria-label="Processing progress" max={100} value={upload.phase === 'done' ? 100 : Math.round(100 * jobShare(upload.job))} />
            )}
            <span role="status" className="admin-progress-text">
              {upload.phase === 'sending' && `Uploading… ${fmtBytes(upload.loaded)} of ${fmtBytes(upload.total)}`}
              {upload.phase === 'indexing' && describeJob(upload.job)}
              {upload.phase === 'done' &&
                (upload.result.duplicate
                  ? `${upload.result.document.filename} is already stored (same content); nothing new was added.`
                  : `Added ${upload.result.document.filename}: ${upload.result.document.chunk_count} chunks.`)}
            </span>
            {upload.phase === 'failed' && (
              <p role="alert" className="error">
                Upload failed: {upload.message}
              </p>
            )}
          </div>
        )}
      </section>

      <section className="admin-card" aria-labelledby="documents-heading">
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
        {documents && (
          <div className="admin-table-wrap">
            <table className="admin-table">
              <caption id="documents-heading">Documents</caption>
              <thead>
                <tr>
                  <th scope="col">File</th>
                  <th scope="col">Pages</th>
                  <th scope="col">Chunks</th>
                  <th scope="col">Leaves</th>
                  <th scope="col">Size</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {documents.length === 0 && (
                  <tr>
                    <td colSpan={7}>No documents yet.</td>
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
                    <td>
                      <button type="button" onClick={() => setConfirming(doc)} aria-describedby={`doc-${doc.id}`}>
                        Delete
                      </button>
                      <span id={`doc-${doc.id}`} className="visually-hidden">
                        {doc.filename}
                      </span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <SearchTester />

      {confirming && <ConfirmDelete doc={confirming} onCancel={() => setConfirming(null)} onConfirm={() => void onDelete(confirming)} />}
    </div>
  );
}

function ConfirmDelete({ doc, onCancel, onConfirm }: { doc: DocumentInfo; onCancel: () => void; onConfirm: () => void }) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    cancel.current?.focus();
    return () => opener?.focus();
  }, []);
  return (
    <div className="admin-backdrop">
      <div role="dialog" aria-modal="true" aria-label="Delete document" className="admin-dialog" onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
        <p>
          Delete <strong>{doc.filename}</strong> and its {doc.chunk_count} chunks? Answers will no longer cite it.
        </p>
        <div className="admin-dialog-buttons">
          <button type="button" className="danger" onClick={onConfirm}>
            Delete
          </button>
          <button type="button" ref={cancel} onClick={onCancel}>
            Cancel
          </button>
        </div>
      </div>
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
