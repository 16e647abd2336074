import { Transform } from 'class-transformer';

/** class-transformer rule for UUIDs: one spelling (lower case) for ids given in any case, so they compare and key alike. */
export function LowercaseId(): PropertyDecorator {
  return Transform(({ value }) => (typeof value === 'string' ? value.toLowerCase() : value));
}
