import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AuthUser, RequestWithUser } from './auth-user.js';
import { RequestError } from '../common/coded-error.js';

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const user = context.switchToHttp().getRequest<RequestWithUser>().user;
  if (!user) throw new RequestError('unauthorized', 'Authentication required');
  return user;
});
