import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { MessageType } from './session.dto.js';
import type { ChatSession } from './chat-session.entity.js';

@Entity({ name: 'chat_messages' })
@Unique('uq_chat_messages_session_seq', ['sessionId', 'seq'])
export class ChatMessage {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne('ChatSession', (session: ChatSession) => session.messages, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: ChatSession;

  /** 1-based position in the conversation. */
  @Column({ type: 'integer' })
  seq: number;

  @Column({ type: 'varchar', length: 16 })
  type: MessageType;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'rag_trace', type: 'jsonb', nullable: true })
  ragTrace: Record<string, unknown> | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
