import type { AuthUser } from '../../auth/auth-user.js';
import { groupNameProblem } from '../../auth/groups.js';
import { userIdProblem } from '../../auth/user-id.js';

/** The collection `default`: the knowledge base as it was before collections, readable by everyone, written by administrators. */
export const DEFAULT_COLLECTION_ID = '00000000-0000-4000-8000-000000000001';
export const DEFAULT_COLLECTION_NAME = 'default';
/** What a route's `:id` may say instead of the default collection's id. */
export const DEFAULT_COLLECTION_ALIAS = 'default';

export const COLLECTION_NAME_MAX_LENGTH = 100;
export const COLLECTION_DESCRIPTION_MAX_LENGTH = 2000;
/** Most entries of one access list. */
export const MAX_ACCESS_ENTRIES = 200;
/** Most collections one user may own (created, and not deleted); administrators have no limit. */
export const MAX_OWNED_COLLECTIONS = 100;

/** viewer: retrieve and read; editor: also add and delete documents; owner: also edit the access list, rename, delete. */
export const COLLECTION_ROLES = ['viewer', 'editor', 'owner'] as const;
export type CollectionRole = (typeof COLLECTION_ROLES)[number];

const RANK: Record<CollectionRole, number> = { viewer: 1, editor: 2, owner: 3 };

/** Whether `role` allows what `needed` allows. */
export function roleAllows(role: CollectionRole, needed: CollectionRole): boolean {
  return RANK[role] >= RANK[needed];
}

/** The higher of the roles (null: none). */
export function highestRole(roles: Iterable<CollectionRole>): CollectionRole | null {
  let best: CollectionRole | null = null;
  for (const role of roles) if (!best || RANK[role] > RANK[best]) best = role;
  return best;
}

export const EVERYONE = 'everyone';
export const USER_PRINCIPAL_PREFIX = 'user:';
export const GROUP_PRINCIPAL_PREFIX = 'group:';

/** One entry of an access list: `principal` is `user:<id>`, `group:<name>` or `everyone`. */
export interface AccessEntry {
  principal: string;
  role: CollectionRole;
}

/** The principals a user acts as: everyone, the user, each of the user's groups. Compared exactly, as stored. */
export function principalsOf(user: Pick<AuthUser, 'userId' | 'groups'>): string[] {
  return [EVERYONE, `${USER_PRINCIPAL_PREFIX}${user.userId}`, ...user.groups.map((group) => `${GROUP_PRINCIPAL_PREFIX}${group}`)];
}

/** Why `principal` is not one, or null: `everyone`, `user:<id>` with the rules of a token's `sub`, `group:<name>` with those of a group. */
export function principalProblem(principal: string): string | null {
  if (principal === EVERYONE) return null;
  if (principal.startsWith(USER_PRINCIPAL_PREFIX)) {
    const problem = userIdProblem(principal.slice(USER_PRINCIPAL_PREFIX.length));
    return problem && `the user id ${problem}`;
  }
  if (principal.startsWith(GROUP_PRINCIPAL_PREFIX)) {
    const problem = groupNameProblem(principal.slice(GROUP_PRINCIPAL_PREFIX.length));
    return problem && `the group name ${problem}`;
  }
  return 'must be "everyone", "user:<id>" or "group:<name>"';
}
