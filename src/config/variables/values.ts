/** The kinds of value the variables take, each with the message a wrong value gets. */
import { z } from 'zod';

export function integer(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z.coerce.number({ error: message }).refine((n) => Number.isInteger(n) && n >= min && n <= max, message);
}

export function decimal(min: number, max: number) {
  const message = `must be a number from ${min} to ${max}`;
  return z.coerce.number({ error: message }).refine((n) => n >= min && n <= max, message);
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${JSON.stringify(issue.input)})` });
}

/** Exactly `true` or `false`, as before; no `yes`, `1` or `TRUE`. */
export function flag() {
  return z.stringbool({ truthy: ['true'], falsy: ['false'], case: 'sensitive', error: 'must be true or false' });
}

export function httpUrl(what = 'an http(s) URL') {
  return z.string().regex(/^https?:\/\/.+/, `must be ${what}`);
}
