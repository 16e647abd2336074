export interface AuthUser {
  userId: string;
  isAdmin: boolean;
}

export interface RequestWithUser {
  user?: AuthUser;
}
