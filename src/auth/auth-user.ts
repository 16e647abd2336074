export interface AuthUser {
  userId: string;
  isAdmin: boolean;
  /** Set when the request was authenticated by an API key (its id): per-key rate limits, no key creation. */
  apiKeyId?: string;
  /** When the credential of the request stops being valid (seconds since the epoch): a token's exp, a key's expires_at; absent: never. */
  credentialExpiresAt?: number;
}

export interface RequestWithUser {
  user?: AuthUser;
}
