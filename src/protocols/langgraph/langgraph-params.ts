import { isUUID } from 'class-validator';
import { RequestError } from '../../common/coded-error.js';
import { storableTextProblem } from '../../common/storable-text.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A JSON body: an object (absent: `{}`); anything else is a 400. */
export function bodyOf(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new RequestError('invalid_request', 'The body must be a JSON object');
  return raw;
}

/**
 * A thread or run id: a UUID (sessions and runs are named by UUIDs), lower-cased. The check is the REST
 * routes' (`@IsUUID()`: an RFC 9562 version and variant, or the nil and max UUIDs), so that a thread is always
 * a session `/api/sessions/:id` and `/api/chat/ui` can address.
 */
export function threadIdOf(value: unknown, name = 'thread_id'): string {
  if (typeof value !== 'string' || !isUUID(value)) throw new RequestError('invalid_request', `${name} must be a UUID`);
  return value.toLowerCase();
}

export function optionalEnum<T extends string>(value: unknown, allowed: readonly T[], name: string): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value as T)) throw new RequestError('invalid_request', `${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** `limit` and `offset` of a search, from a body or a query string. */
export function pageOf(limit: unknown, offset: unknown, fallback: number, max: number): { limit: number; offset: number } {
  const integer = (value: unknown, name: string, min: number, top: number, otherwise: number): number => {
    if (value === undefined || value === null || value === '') return otherwise;
    const number = typeof value === 'string' && /^[0-9]{1,9}$/.test(value) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > top)
      throw new RequestError('invalid_request', `${name} must be an integer from ${min} to ${top}`);
    return number;
  };
  return { limit: integer(limit, 'limit', 1, max, fallback), offset: integer(offset, 'offset', 0, 1_000_000_000, 0) };
}

/** The largest thread metadata kept (its JSON), and the most keys of an object in it. */
export const METADATA_MAX_BYTES = 64 * 1024;

/**
 * Thread metadata as it is kept (JSONB): an object (absent or null: `{}`), its strings and keys storable text
 * (no NUL, no lone surrogate), at most METADATA_MAX_BYTES of JSON. 400 naming `name` otherwise.
 */
export function metadataOf(value: unknown, name = 'metadata'): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new RequestError('invalid_request', `${name} must be an object`);
  const visit = (node: unknown, at: string): void => {
    if (typeof node === 'string') {
      const problem = storableTextProblem(node);
      if (problem) throw new RequestError('invalid_request', `${at} ${problem}`);
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, `${at}[${i}]`));
    } else if (isRecord(node)) {
      for (const [key, item] of Object.entries(node)) {
        const problem = storableTextProblem(key);
        if (problem) throw new RequestError('invalid_request', `a key of ${at} ${problem}`);
        visit(item, `${at}.${key.slice(0, 40)}`);
      }
    }
  };
  visit(value, name);
  if (Buffer.byteLength(JSON.stringify(value)) > METADATA_MAX_BYTES) throw new RequestError('invalid_request', `${name} must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  return value;
}
