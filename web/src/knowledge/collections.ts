import { useCallback, useEffect, useState } from 'react';
import { api, describeError, type Schemas } from '../api';
import { DEFAULT_COLLECTION_ID, type ErrorBody } from './uploads';

export type CollectionInfo = Schemas['CollectionInfo'];
export type AccessEntry = Schemas['AccessEntryInfo'];
export type CollectionRole = CollectionInfo['role'];

export const ROLES: CollectionRole[] = ['viewer', 'editor', 'owner'];
const RANK: Record<CollectionRole, number> = { viewer: 1, editor: 2, owner: 3 };

/** Whether `role` allows what `needed` allows (as the service decides it: src/knowledge/collections/collection.ts). */
export function roleAllows(role: CollectionRole, needed: CollectionRole): boolean {
  return RANK[role] >= RANK[needed];
}

export const ROLE_TEXT: Record<CollectionRole, string> = {
  viewer: 'viewer: reads it, and answers may cite it',
  editor: 'editor: also adds and deletes documents',
  owner: 'owner: also shares, renames and deletes it',
};

export function isDefault(collection: Pick<CollectionInfo, 'id'>): boolean {
  return collection.id === DEFAULT_COLLECTION_ID;
}

/** Every collection the caller reads (all pages), `default` first. */
export async function fetchCollections(): Promise<{ collections: CollectionInfo[] } | { error: string }> {
  const all: CollectionInfo[] = [];
  let cursor: string | undefined;
  do {
    const { data, error, response } = await api.GET('/api/knowledge/collections', { params: { query: { limit: 1000, cursor } } });
    if (error || !data) return { error: describeError(response.status, error as ErrorBody | undefined) };
    all.push(...data.collections);
    cursor = data.next_cursor ?? undefined;
  } while (cursor);
  return { collections: all };
}

/** The collections the caller reads, loaded on mount; `reload` reads them again. */
export function useCollections(): { collections: CollectionInfo[] | null; error: string | null; reload: () => Promise<void> } {
  const [collections, setCollections] = useState<CollectionInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    const result = await fetchCollections();
    if ('error' in result) return setError(result.error);
    setError(null);
    setCollections(result.collections);
  }, []);
  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- loading the server's list is what this effect is for
    void reload();
  }, [reload]);
  return { collections, error, reload };
}

/** A principal in words: `user:alice` → "user alice", `group:finance` → "group finance", `everyone` → "everyone signed in". */
export function describePrincipal(principal: string): string {
  if (principal === 'everyone') return 'everyone signed in';
  const colon = principal.indexOf(':');
  return colon > 0 ? `${principal.slice(0, colon)} ${principal.slice(colon + 1)}` : principal;
}
