import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export const API_KEY_ROLES = ['user', 'admin'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

@Entity({ name: 'api_keys' })
@Index('idx_api_keys_user_created', ['userId', 'createdAt'])
export class ApiKey {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 128 })
  userId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** The first characters after `rk-`, for recognising a key in listings; never enough to use it. */
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  /** SHA-256 of the whole key (see api-key.service.ts for why a plain hash suffices). */
  @Index('idx_api_keys_key_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'bytea', select: false })
  keyHash: Buffer;

  /** The role of the token that created the key, which every request with the key carries. */
  @Column({ type: 'varchar', length: 16 })
  role: ApiKeyRole;

  /** The groups of the token that created the key, which every request with the key carries. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  groups: string[];

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
