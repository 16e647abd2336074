export interface AuthUser {
  userId: string;
  isAdmin: boolean;
  /**
   * The groups the credential names (JWT_GROUPS_CLAIM; an API key's are those of the token that created it),
   * compared exactly; access to knowledge collections may be granted to `group:<name>`.
   */
  groups: string[];
  /** Set when the request was authenticated by an API key (its id): per-key rate limits, no key creation. */
  apiKeyId?: string;
  /** When the credential of the request stops being valid (seconds since the epoch): a token's exp, a key's expires_at; absent: never. */
  credentialExpiresAt?: number;
}

export interface RequestWithUser {
  user?: AuthUser;
}
