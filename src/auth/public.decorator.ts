import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:isPublic';

/** Marks a route that needs no bearer token (health). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
