export function messagesCacheKey(userId: string, sessionId: string): string {
  return `chat_messages:${userId}:${sessionId}`;
}

export function sessionsCacheKey(userId: string): string {
  return `chat_sessions:${userId}`;
}
