import { CodedError } from '../../common/coded-error.js';
import { hasControlCharacter, storableTextProblem } from '../../common/storable-text.js';

/** A document's file name that cannot be stored as given (answered with 400). */
export class InvalidDocumentNameError extends CodedError {
  readonly code = 'invalid_document_name';
}

/** Longest file name, in characters (Unicode code points, as PostgreSQL counts `varchar(255)`). */
export const MAX_DOCUMENT_NAME_LENGTH = 255;

/** Why `name` cannot be a document's file name, or null when it can. */
export function documentNameProblem(name: string): string | null {
  if (!name.trim()) return 'file name is empty';
  const unstorable = storableTextProblem(name);
  if (unstorable) return `file name ${unstorable}`;
  if (hasControlCharacter(name)) return 'file name contains a control character';
  const length = Array.from(name).length;
  if (length > MAX_DOCUMENT_NAME_LENGTH) return `file name is longer than ${MAX_DOCUMENT_NAME_LENGTH} characters (${length})`;
  return null;
}

/**
 * The file name of a multipart upload, as multer gives it: decoded as UTF-8
 * (the module sets `defParamCharset`), or in the charset an RFC 5987
 * `filename*` names. The decoder replaces bytes that are not UTF-8 with
 * U+FFFD; such a name is refused rather than stored altered.
 */
export function uploadedDocumentName(originalname: string): string {
  if (originalname.includes('\ufffd')) {
    throw new InvalidDocumentNameError('file name is not valid UTF-8 (bytes that could not be read were replaced by U+FFFD)');
  }
  // Stored exactly as sent or refused: a name is never cut down to what follows its last separator.
  if (/[/\\]/.test(originalname)) throw new InvalidDocumentNameError('file name must not contain "/" or "\\" (send the bare file name)');
  return originalname;
}
