import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { buildDataSourceOptions } from './data-source-options.js';
import { withMaintenanceDataSource } from './maintenance.js';

/** The advisory lock instances starting together take turns on, so each sees the schema the one before it left. */
const MIGRATION_LOCK_KEY = 7_241_860_113;

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

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        if (config.database.migrationsRun) await runMigrations(config);
        return { ...buildDataSourceOptions(config), migrationsRun: false, retryAttempts: 0, autoLoadEntities: true };
      },
    }),
  ],
})
export class DatabaseModule {}
