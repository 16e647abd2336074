import type { AppConfig } from '../config/app-config.js';
import { withMaintenanceDataSource } from './maintenance.js';

/** The advisory lock instances starting together take turns on, so each sees the schema the one before it left. */
const MIGRATION_LOCK_KEY = 7_241_860_113;

/** Applies the pending migrations under the migration lock (infrastructure: the only SQL of this module besides the migrations). */
export async function runMigrations(config: AppConfig): Promise<void> {
  await withMaintenanceDataSource(config, async (maintenance) => {
    // Held on one connection for the whole run; the migrations use another one of the pool.
    const lock = maintenance.createQueryRunner();
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      await maintenance.runMigrations({ transaction: 'each' });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      await lock.release();
    }
  });
}
