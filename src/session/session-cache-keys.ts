import { userHashTag } from '../common/redis-keys.js';

/** A user's cached entries share the user's hash tag: on a Redis Cluster they are one slot, and invalidated together. */
export function messagesCacheKey(userId: string, sessionId: string): string {
  return `chat_messages:${userHashTag(userId)}:${sessionId}`;
}

export function sessionsCacheKey(userId: string): string {
  return `chat_sessions:${userHashTag(userId)}`;
}
