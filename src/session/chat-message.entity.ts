import { Check, Column, CreateDateColumn, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { FeedbackRating, MessageStatus, MessageType } from './session.dto.js';
import type { ChatSession } from './chat-session.entity.js';

@Entity({ name: 'chat_messages' })
@Unique('uq_chat_messages_session_seq', ['sessionId', 'seq'])
@Check('chat_messages_seq_check', '"seq" >= 1')
@Check('chat_messages_type_check', `"type" IN ('human', 'ai', 'system')`)
@Check('chk_chat_messages_status', `"status" IN ('complete', 'cancelled', 'failed')`)
@Check('chk_chat_messages_feedback_rating', `"feedback_rating" IN ('up', 'down')`)
@Check(
  'chk_chat_messages_feedback_whole',
  '("feedback_rating" IS NULL AND "feedback_comment" IS NULL AND "feedback_updated_at" IS NULL) OR ("feedback_rating" IS NOT NULL AND "feedback_updated_at" IS NOT NULL)',
)
export class ChatMessage {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne('ChatSession', (session: ChatSession) => session.messages, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'chat_messages_session_id_fkey' })
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

  /** The tools the turn ran (an answer's), in the order first called. */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  tools: string[];

  /** The message's id on the wire (the bigint `id` stays internal); drawn by the database at insert. */
  @Index('uq_chat_messages_public_id', { unique: true })
  @Column({ name: 'public_id', type: 'uuid' })
  @Generated('uuid')
  publicId: string;

  /** The run that stored the message; no foreign key, so it outlives a purged run. */
  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId: string | null;

  @Column({ type: 'varchar', length: 16, default: 'complete' })
  status: MessageStatus;

  /** Rating, comment and time are all set or all null (a check constraint). */
  @Column({ name: 'feedback_rating', type: 'varchar', length: 8, nullable: true })
  feedbackRating: FeedbackRating | null;

  @Column({ name: 'feedback_comment', type: 'text', nullable: true })
  feedbackComment: string | null;

  @Column({ name: 'feedback_updated_at', type: 'timestamptz', nullable: true })
  feedbackUpdatedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
