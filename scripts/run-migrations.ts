import { ConfigValidationError, loadConfig } from '../src/config/app-config.js';
import { StartupFailure } from '../src/common/startup-failure.js';
import { applyEnvFile } from '../src/config/env-file.js';
import { runMigrations } from '../src/database/database.module.js';

/**
 * `npm run migration:run`: applies pending migrations the way a starting
 * instance does, under the same advisory lock, so it can run while
 * instances start.
 */
async function main(): Promise<void> {
  try {
    applyEnvFile();
    const config = loadConfig();
    await runMigrations(config);
    process.stdout.write('migrations are up to date\n');
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigValidationError || error instanceof StartupFailure ? error.message : ((error as Error).stack ?? String(error))}\n`);
    process.exit(1);
  }
}

void main();
