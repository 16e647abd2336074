import { RequestError } from '../../common/coded-error.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A thread or run id: a UUID (sessions and runs are named by UUIDs), lower-cased. */
export function threadIdOf(value: unknown, name = 'thread_id'): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new RequestError('invalid_request', `${name} must be a UUID`);
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
