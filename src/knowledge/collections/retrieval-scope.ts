/**
 * The collections one search may read. Recall applies it inside each of its
 * rankings (the full-text SQL, the pgvector query, the in-memory scan) and in
 * every chunk read after them (details, auto-merge's parents), never by
 * dropping results afterwards: a large collection the caller cannot read
 * would otherwise push the readable ones out of the top k.
 *
 * A request's scope comes from CollectionAccess.retrievalScope, which reads
 * the caller's access entries in PostgreSQL on every request (nothing is
 * cached, so a revoked share holds from the next request on, on every
 * instance). `unrestricted()` searches every collection: for benches and
 * maintenance only, never for a caller's request (it is not exported from
 * the module's door).
 */
export class RetrievalScope {
  private static readonly EVERY_COLLECTION = new RetrievalScope(null);

  private constructor(
    /** The collection ids searched; null: every collection. */
    readonly collectionIds: readonly string[] | null,
  ) {}

  /** The given collections, which the caller was found to read (an empty list searches nothing). */
  static of(collectionIds: readonly string[]): RetrievalScope {
    return new RetrievalScope(Object.freeze([...new Set(collectionIds)]));
  }

  /** Every collection: for benches and maintenance, never a caller's request. */
  static unrestricted(): RetrievalScope {
    return RetrievalScope.EVERY_COLLECTION;
  }

  /** Whether the scope holds no collection: recall then finds nothing, without a query. */
  get empty(): boolean {
    return this.collectionIds !== null && this.collectionIds.length === 0;
  }

  /** Whether a chunk of `collectionId` is in the scope. */
  includes(collectionId: string): boolean {
    return this.collectionIds === null || this.collectionIds.includes(collectionId);
  }
}
