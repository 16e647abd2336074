export interface AuthUser {
  userId: string;
  isAdmin: boolean;
  /** Set when the request was authenticated by an API key (its id): per-key rate limits, no key creation. */
  apiKeyId?: string;
}

export interface RequestWithUser {
  user?: AuthUser;
}
