import { isUUID } from 'class-validator';
import { v5 as uuidv5 } from 'uuid';

/** Namespace of the session ids derived from AI SDK chat ids (fixed: changing it would orphan every such session). */
const UI_CHAT_NAMESPACE = '6f0d7c52-4b5e-4c61-9a59-0e8f2a7d3b14';

/**
 * The session of an AI SDK chat id: a UUID is the session id itself; any
 * other id is mapped to a UUID v5 of the user and the id, so one chat id
 * always means the same session for its user and never another user's.
 * User ids hold no control characters, so the line break keeps pairs apart.
 */
export function sessionIdForChat(userId: string, chatId: string): string {
  if (isUUID(chatId)) return chatId.toLowerCase();
  return uuidv5(`${userId}\n${chatId}`, UI_CHAT_NAMESPACE);
}
