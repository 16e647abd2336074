import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';

/**
 * The session of an AI SDK chat id: a UUID is the session id itself; any
 * other id (useChat generates short random ones) is mapped to a UUID made
 * from an HMAC of the user and the id, so one chat id always means the same
 * session for its user. The key is derived from JWT_SECRET: without it
 * nobody can compute another user's session id and claim it first (sessions
 * belong to whoever uses an id first). Changing JWT_SECRET maps such chat
 * ids to new sessions. User ids hold no control characters, so the line
 * break keeps (user, chat) pairs apart.
 */
@Injectable()
export class UiSessionIds {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = createHmac('sha256', config.auth.jwtSecret).update('ai-sdk chat session ids').digest();
  }

  forChat(userId: string, chatId: string): string {
    if (isUUID(chatId)) return chatId.toLowerCase();
    const bytes = createHmac('sha256', this.key).update(`${userId}\n${chatId}`).digest().subarray(0, 16);
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8: an id of its own making (RFC 9562)
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // the RFC variant
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
