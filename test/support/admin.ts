import { JwtService } from '@nestjs/jwt';
import { TEST_JWT_SECRET } from './test-env.js';
import { type TestApp, uniqueUser } from './test-app.js';

/** A bearer header for an administrator of `app` that no other test uses (`prefix` names it in logs and rows). */
export function adminAuth(app: Pick<TestApp, 'auth'>, prefix = 'admin'): { Authorization: string } {
  return app.auth(uniqueUser(prefix), { role: 'admin' });
}

/** A bearer header for an administrator, signed with the test secret: for the built service (startService). */
export function adminBearer(sub = uniqueUser('admin')): { Authorization: string } {
  const token = new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub, role: 'admin' }, { algorithm: 'HS256', expiresIn: '1h' });
  return { Authorization: `Bearer ${token}` };
}
