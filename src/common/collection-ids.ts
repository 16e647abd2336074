import { applyDecorators } from '@nestjs/common';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsString, MaxLength } from 'class-validator';

/** Most knowledge collections one turn, session or search may name. */
export const MAX_NAMED_COLLECTIONS = 50;
/** Longest name of one: a collection id is a UUID (36 characters) or `default`; a longer string names none. */
export const NAMED_COLLECTION_MAX_LENGTH = 64;

/** The OpenAPI description of a `collection_ids` field. */
export const COLLECTION_IDS_DESCRIPTION =
  `Knowledge collections to search (ids, or \`default\`; 1 to ${MAX_NAMED_COLLECTIONS}); absent or null: every collection the caller can read. ` +
  'A collection the caller cannot read (or that does not exist) answers 404 `collection_not_found`';

/**
 * The shape of a `collection_ids` field: a non-empty array of at most
 * MAX_NAMED_COLLECTIONS strings of at most NAMED_COLLECTION_MAX_LENGTH
 * characters. Whether each names a collection the caller may read is the
 * knowledge module's question (404 when not).
 */
export function IsCollectionIdList(): PropertyDecorator {
  return applyDecorators(
    IsArray(),
    ArrayNotEmpty({ message: '$property must name at least one collection (send null, or leave it out, to search every collection you can read)' }),
    ArrayMaxSize(MAX_NAMED_COLLECTIONS),
    IsString({ each: true }),
    MaxLength(NAMED_COLLECTION_MAX_LENGTH, { each: true, message: `each of $property must be a collection id (at most ${NAMED_COLLECTION_MAX_LENGTH} characters)` }),
  );
}

/** What is wrong with `value` as a `collection_ids` list (IsCollectionIdList's rules), or null; for bodies validated by hand. */
export function collectionIdsProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return 'must be an array of collection ids';
  if (value.length === 0) return 'must name at least one collection (send null, or leave it out, to search every collection you can read)';
  if (value.length > MAX_NAMED_COLLECTIONS) return `must name at most ${MAX_NAMED_COLLECTIONS} collections`;
  const bad = value.findIndex((item) => typeof item !== 'string' || item.length > NAMED_COLLECTION_MAX_LENGTH);
  return bad < 0 ? null : `[${bad}] must be a collection id (a string of at most ${NAMED_COLLECTION_MAX_LENGTH} characters)`;
}
