import type { RetrievalScope } from '../collections/retrieval-scope.js';

/** The SQL condition `AND <column> = ANY(<param>)` of a restricted scope ('' for every collection); its value is scopeParams(scope). */
export function inScope(scope: RetrievalScope, param: string, column = 'collection_id'): string {
  return scope.collectionIds === null ? '' : `AND ${column} = ANY(${param}::uuid[])`;
}

/** The parameter inScope's condition reads: the scope's collection ids, or none for every collection. */
export function scopeParams(scope: RetrievalScope): unknown[] {
  return scope.collectionIds === null ? [] : [[...scope.collectionIds]];
}
