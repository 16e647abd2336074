import { API_BASE, api, describeError, type Schemas, tokenRefused, tokenStore } from '../api';

export type DocumentInfo = Schemas['KnowledgeDocumentInfo'];
export type UploadResponse = Schemas['DocumentUploadResponse'];
export type IngestJob = Schemas['IngestJobInfo'];
export type ErrorBody = Schemas['ApiErrorBody'];

/** The `default` collection: the knowledge base of the time before collections (its well-known id). */
export const DEFAULT_COLLECTION_ID = '00000000-0000-4000-8000-000000000001';

/** Where documents go: the default collection through its own routes (/api/knowledge/documents), or a collection by id. */
export type UploadTarget = { kind: 'default' } | { kind: 'collection'; id: string };

export const ACCEPT = [
  '.txt,.md,.pdf,.docx,.xlsx,.csv,.html,.htm',
  'text/plain,text/markdown,application/pdf,text/csv,text/html',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
].join(',');

/** How often a running ingest job is read again. */
const JOB_POLL_MS = 500;

/** Reads the job until it has completed, failed or been cancelled (its document deleted meanwhile), reporting each state. */
export async function followJob(id: string, onJob: (job: IngestJob) => void): Promise<IngestJob> {
  for (;;) {
    const { data, error, response } = await api.GET('/api/knowledge/jobs/{id}', { params: { path: { id } } });
    if (error || !data) throw new Error(describeError(response.status, error as ErrorBody | undefined));
    onJob(data);
    if (data.status === 'completed' || data.status === 'failed' || data.status === 'cancelled') return data;
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}

const STAGE_LABEL: Record<string, string> = { parsing: 'parsing', embedding: 'embedding', storing: 'storing', indexing: 'indexing' };

export function describeJob(job: IngestJob | undefined): string {
  if (!job || job.status === 'queued') return 'Uploaded; waiting for a worker…';
  if (job.status !== 'active' || !job.stage) return `Job ${job.status}…`;
  const counted = job.progress.total > 1 ? ` ${job.progress.done} of ${job.progress.total}` : '';
  return `Uploaded; ${STAGE_LABEL[job.stage] ?? job.stage}${counted}…`;
}

/** The job's share done over all stages, 0..1. */
export function jobShare(job: IngestJob | undefined): number {
  if (!job) return 0;
  if (job.status === 'completed') return 1;
  const weights: Record<string, [number, number]> = { parsing: [0, 0.05], embedding: [0.05, 0.6], storing: [0.65, 0.3], indexing: [0.95, 0.05] };
  const [start, share] = job.stage ? (weights[job.stage] ?? [0, 0]) : [0, 0];
  return start + share * (job.progress.total > 0 ? job.progress.done / job.progress.total : 0);
}

function uploadPath(target: UploadTarget): string {
  return target.kind === 'default' ? '/api/knowledge/documents' : `/api/knowledge/collections/${encodeURIComponent(target.id)}/documents`;
}

/** POST the file with upload progress (fetch has none), typed with the client's schema. */
export function uploadDocument(
  target: UploadTarget,
  file: File,
  onProgress: (loaded: number, total: number) => void,
): Promise<{ status: number; body: UploadResponse | ErrorBody | undefined }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${API_BASE}${uploadPath(target)}`);
    xhr.setRequestHeader('Authorization', `Bearer ${tokenStore.get() ?? ''}`);
    xhr.responseType = 'json';
    xhr.upload.addEventListener('progress', (e) => e.lengthComputable && onProgress(e.loaded, e.total));
    xhr.upload.addEventListener('load', (e) => onProgress(e.total || e.loaded, e.total || e.loaded));
    xhr.addEventListener('load', () => {
      if (xhr.status === 401) tokenRefused((xhr.response as ErrorBody | null)?.message); // as every typed call does (api.ts): back to sign-in
      resolve({ status: xhr.status, body: (xhr.response ?? undefined) as UploadResponse | ErrorBody | undefined });
    });
    xhr.addEventListener('error', () => reject(new Error('The service did not answer.')));
    xhr.addEventListener('abort', () => reject(new Error('The upload was cancelled.')));
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}

/** Every document of the target, newest first (a page at a time), or the error in words. */
export async function listDocuments(target: UploadTarget): Promise<{ documents: DocumentInfo[] } | { error: string }> {
  const all: DocumentInfo[] = [];
  let cursor: string | undefined;
  do {
    const result =
      target.kind === 'default'
        ? await api.GET('/api/knowledge/documents', { params: { query: { cursor } } })
        : await api.GET('/api/knowledge/collections/{id}/documents', { params: { path: { id: target.id }, query: { cursor } } });
    if (result.error || !result.data) return { error: describeError(result.response.status, result.error as ErrorBody | undefined) };
    all.push(...result.data.documents);
    cursor = result.data.next_cursor ?? undefined;
  } while (cursor);
  return { documents: all };
}

/** Deletes a document of the target; the error in words, or null. */
export async function deleteDocument(target: UploadTarget, id: string): Promise<string | null> {
  const result =
    target.kind === 'default'
      ? await api.DELETE('/api/knowledge/documents/{id}', { params: { path: { id } } })
      : await api.DELETE('/api/knowledge/collections/{id}/documents/{document_id}', { params: { path: { id: target.id, document_id: id } } });
  return result.error ? describeError(result.response.status, result.error as ErrorBody | undefined) : null;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
