import { type FormEvent, useId, useRef, useState } from 'react';
import { describeError } from '../api';
import {
  ACCEPT,
  type DocumentInfo,
  describeJob,
  type ErrorBody,
  fmtBytes,
  followJob,
  type IngestJob,
  jobShare,
  listDocuments,
  type UploadResponse,
  type UploadTarget,
  uploadDocument,
} from './uploads';
import '../admin/admin.css';

type Upload =
  | { phase: 'idle' }
  | { phase: 'sending'; loaded: number; total: number }
  | { phase: 'indexing'; loaded: number; total: number; job?: IngestJob }
  | { phase: 'done'; loaded: number; total: number; result: { duplicate: boolean; document: DocumentInfo } }
  | { phase: 'failed'; loaded: number; total: number; message: string };

/**
 * The upload form with its two progress bars (the bytes sent, then the ingest
 * job followed to its end), for the default collection (the administrators'
 * screen) and for any collection (the Knowledge screen). `onUploaded` gets the
 * target's documents as they are once the job ended.
 */
export function DocumentUpload({ target, heading, onUploaded }: { target: UploadTarget; heading: string; onUploaded(documents: DocumentInfo[]): void }) {
  const [upload, setUpload] = useState<Upload>({ phase: 'idle' });
  const [file, setFile] = useState<File | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const id = useId();

  /** The file is handled (added, or stored already): the box is emptied for the next one. */
  const clearFile = () => {
    setFile(null);
    if (fileInput.current) fileInput.current.value = '';
  };

  const onUpload = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    setUpload({ phase: 'sending', loaded: 0, total: file.size });
    const sent = (u: Upload) => ({ loaded: u.phase === 'idle' ? 0 : u.loaded, total: u.phase === 'idle' ? file.size : u.total });
    const fail = (message: string) => setUpload((u) => ({ phase: 'failed', ...sent(u), message }));
    try {
      const { status, body } = await uploadDocument(target, file, (loaded, total) =>
        // Once every byte is sent the server parses, chunks and embeds the document.
        setUpload({ phase: loaded >= total ? 'indexing' : 'sending', loaded, total }),
      );
      const reply = body as UploadResponse | undefined;
      if (status === 200 && reply?.document) {
        setUpload((u) => ({ phase: 'done', ...sent(u), result: { duplicate: true, document: reply.document! } }));
        clearFile();
        return;
      }
      if (status !== 202 || !reply?.job) return fail(describeError(status, body as ErrorBody | undefined));
      // Stored and queued: a worker parses, chunks and embeds it; its job says how far it got.
      const job = await followJob(reply.job.id, (current) => setUpload((u) => ({ phase: 'indexing', ...sent(u), job: current })));
      if (job.status === 'failed') return fail(job.error?.message ?? 'the ingest job failed');
      if (job.status === 'cancelled') return fail('the document was deleted before its ingest ended; nothing is stored');
      const listed = await listDocuments(target);
      if ('error' in listed) return fail(listed.error);
      const document = listed.documents.find((d) => d.id === job.document_id);
      if (!document) return fail('the document was stored, but it is not listed (deleted meanwhile?)');
      setUpload((u) => ({ phase: 'done', ...sent(u), result: { duplicate: job.duplicate ?? false, document } }));
      clearFile();
      onUploaded(listed.documents);
    } catch (error) {
      fail((error as Error).message);
    }
  };

  const busy = upload.phase === 'sending' || upload.phase === 'indexing';
  return (
    <section className="admin-card" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>{heading}</h3>
      <form onSubmit={onUpload} className="admin-upload">
        <label htmlFor={`${id}-file`}>Document file</label>
        <input
          id={`${id}-file`}
          ref={fileInput}
          type="file"
          accept={ACCEPT}
          aria-describedby={`${id}-hint`}
          onChange={(e) => {
            setFile(e.target.files?.[0] ?? null);
            setUpload({ phase: 'idle' });
          }}
        />
        <p id={`${id}-hint`} className="admin-hint">
          .txt, .md, .pdf, .docx, .xlsx, .csv or .html; identical content is not stored twice.
        </p>
        <button type="submit" className="primary" disabled={!file || busy}>
          Upload
        </button>
      </form>
      {upload.phase !== 'idle' && (
        <div className="admin-progress">
          <label htmlFor={`${id}-sent`} className="admin-progress-label">
            Upload progress
          </label>
          <progress id={`${id}-sent`} max={upload.total || 1} value={upload.loaded} />
          {(upload.phase === 'indexing' || upload.phase === 'done') && (
            <>
              <label htmlFor={`${id}-processed`} className="admin-progress-label">
                Processing progress
              </label>
              <progress id={`${id}-processed`} max={100} value={upload.phase === 'done' ? 100 : Math.round(100 * jobShare(upload.job))} />
            </>
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
  );
}
