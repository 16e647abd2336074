import { JwtService } from '@nestjs/jwt';
import { loadConfig } from '../src/config/app-config.js';

/** Usage: npm run token -- <user-id> [--admin] [--expires-in 12h] */
function main(): void {
  const args = process.argv.slice(2);
  const admin = args.includes('--admin');
  const expiresIndex = args.indexOf('--expires-in');
  const expiresIn = expiresIndex >= 0 ? args[expiresIndex + 1] : '12h';
  const userId = args.find((arg, i) => !arg.startsWith('--') && (expiresIndex < 0 || i !== expiresIndex + 1));
  if (!userId || !expiresIn) {
    process.stderr.write('usage: npm run token -- <user-id> [--admin] [--expires-in 12h]\n');
    process.exit(2);
  }
  const config = loadConfig();
  if (config.auth.usingDevelopmentSecret) {
    process.stderr.write('warning: JWT_SECRET is not set; signing with the development secret\n');
  }
  const jwt = new JwtService({ secret: config.auth.jwtSecret });
  const token = jwt.sign(
    { sub: userId, ...(admin ? { role: 'admin' } : {}) },
    { algorithm: 'HS256', expiresIn: expiresIn as `${number}h` },
  );
  process.stdout.write(`${token}\n`);
}

main();
