import { Check, Column, CreateDateColumn, Entity, Index, OneToMany, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { ChatMessage } from './chat-message.entity.js';

@Entity({ name: 'chat_sessions' })
@Index('idx_chat_sessions_user_updated', ['userId', 'updatedAt', 'id'])
@Check('chat_sessions_message_count_check', '"message_count" >= 0')
export class ChatSession {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 128 })
  userId: string;

  @Column({ type: 'varchar', length: 200, default: '' })
  title: string;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata: Record<string, unknown>;

  /** Also the sequence number of the newest message: appends take numbers from it under the row lock. */
  @Column({ name: 'message_count', type: 'integer', default: 0 })
  messageCount: number;

  /** Bumped by every change of the transcript: a cached transcript is served only at the current version. */
  @Column({ type: 'bigint', default: () => "nextval('chat_cache_version_seq')" })
  version: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** The run in flight, set and cleared by the chat module with the run's start and end (no foreign key: runs are the chat module's). */
  @Column({ name: 'active_run_id', type: 'uuid', nullable: true })
  activeRunId: string | null;

  @Column({ name: 'active_run_started_at', type: 'timestamptz', nullable: true })
  activeRunStartedAt: Date | null;

  @OneToMany('ChatMessage', (message: ChatMessage) => message.session)
  messages?: ChatMessage[];
}
