import { MAX_USER_ID_LENGTH, userIdProblem } from './user-id.js';

/** Most groups a credential may carry (an identity provider sending more should send fewer, e.g. only the application's). */
export const MAX_GROUPS = 256;
/** A group name is at most as long as a user id (both end up in `user:`/`group:` principals of varchar(140)). */
export const MAX_GROUP_NAME_LENGTH = MAX_USER_ID_LENGTH;

/**
 * Why `name` cannot be a group name, or null when it can. Group names are
 * compared exactly (no case folding, no normalization), so they follow the
 * rules of a user id (user-id.ts): text PostgreSQL stores unchanged, no
 * control characters, something visible, at most 128 characters.
 */
export function groupNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'must be a non-empty string';
  return userIdProblem(name);
}

/**
 * The groups a token's claim names: absent or null is none, a string is one
 * group, an array of strings is those (duplicates once, in order). Anything
 * else, or a name that breaks the rules, is a problem: the token is refused
 * rather than read with fewer groups than it names.
 */
export function groupsOfClaim(claim: unknown): { groups: string[] } | { problem: string } {
  if (claim === undefined || claim === null) return { groups: [] };
  if (typeof claim !== 'string' && !Array.isArray(claim)) return { problem: 'must be a group name or an array of group names' };
  const names: unknown[] = typeof claim === 'string' ? [claim] : claim;
  if (names.length > MAX_GROUPS) return { problem: `names more than ${MAX_GROUPS} groups` };
  for (const [index, name] of names.entries()) {
    const problem = groupNameProblem(name);
    if (problem) return { problem: `entry ${index} ${problem}` };
  }
  return { groups: [...new Set(names as string[])] };
}
