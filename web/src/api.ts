import { ApiError, createAgenticRagClient, type components } from '@agentic-rag/client';

export type Schemas = components['schemas'];
export { ApiError };

/** Where the API is: VITE_API_BASE at build time (a copy hosted on another origin), else this page's origin. */
export const API_BASE = (import.meta.env.VITE_API_BASE as string | undefined)?.replace(/\/+$/, '') || window.location.origin;

const TOKEN_KEY = 'agentic-rag.token';

/** The bearer token, kept in session storage (gone when the tab closes). */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** The typed client of clients/typescript: every call of the page goes through it, so a contract change breaks this build. */
export const client = createAgenticRagClient({ baseUrl: API_BASE, token: () => tokenStore.get() ?? '' });
export const api = client.api;
export const chat = client.chat;

let unauthorized: (reason?: string) => void = () => undefined;

/**
 * What the page does when the API refuses its token (malformed, expired, revoked): App sends the user back to
 * sign-in, saying why (`reason`: the message of the 401's body, when there was one).
 */
export function onUnauthorized(handler: (reason?: string) => void): void {
  unauthorized = handler;
}

/** Tells the page its token was refused (the upload's XMLHttpRequest calls it; every typed call does through the middleware below). */
export function tokenRefused(reason?: string): void {
  unauthorized(reason);
}

/** The message of a 401's JSON body (`{code, message}`), or undefined. */
export async function refusalReason(response: Response): Promise<string | undefined> {
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { message?: unknown } | null;
  return typeof body?.message === 'string' && body.message ? body.message : undefined;
}

api.use({
  async onResponse({ response }) {
    if (response.status === 401 && tokenStore.get()) unauthorized(await refusalReason(response));
    return response;
  },
});

const DRAFT_KEY = 'agentic-rag.draft';

/** The message being typed, kept for the tab: a refused token sends the user to sign in again without losing it. */
export const draftStore = {
  get: (): string => sessionStorage.getItem(DRAFT_KEY) ?? '',
  set: (text: string): void => (text ? sessionStorage.setItem(DRAFT_KEY, text) : sessionStorage.removeItem(DRAFT_KEY)),
};

/** The claims of a JWT, read without checking it (the server checks it): to show who is signed in and whether as admin. */
export function tokenClaims(token: string): { sub?: string; role?: string; exp?: number } | null {
  try {
    const payload = token.split('.')[1];
    return JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: string; role?: string; exp?: number };
  } catch {
    return null;
  }
}

/** Plain words for the error codes of knowledge collections and their sources (the API's own message is for developers). */
const CODE_TEXT: Record<string, string> = {
  collection_not_found: 'This collection does not exist, or it is no longer shared with you.',
  collection_forbidden: 'Your role in this collection does not allow this: editors add and delete documents; owners share, rename and delete it.',
  collection_creation_forbidden: 'Only administrators may create collections on this service.',
  collection_limit: 'You have created as many collections as allowed. Delete one first.',
  collection_owner_required: 'A collection must keep at least one owner. Make someone else an owner before removing or changing the last one.',
  default_collection_protected: 'The default collection cannot be renamed or deleted, and must stay readable by everyone.',
  chunk_not_found: 'This source is no longer available.',
  document_not_found: 'This document is no longer in the collection.',
};

/** A message for the user from an error body of the API, by status and code. */
export function describeError(status: number, body: { message?: string; code?: string } | undefined): string {
  const known = body?.code ? CODE_TEXT[body.code] : undefined;
  if (known) return known;
  const detail = body?.message ? ` ${body.message}` : '';
  switch (status) {
    case 401:
      return `Not signed in or the token expired.${detail}`;
    case 403:
      return `Not allowed for this account.${detail}`;
    case 409:
      return body?.code === 'cancelled' ? 'The turn was cancelled.' : `This session is busy with another turn.${detail}`;
    case 413:
      return `Too large for the server.${detail}`;
    case 429:
      return `Too many requests; wait a moment.${detail}`;
    case 502:
      return `The model failed.${detail}`;
    case 503:
      return `The service is temporarily unavailable.${detail}`;
    case 504:
      return `The model did not answer in time.${detail}`;
    default:
      return body?.message ?? `Request failed (${status}).`;
  }
}
