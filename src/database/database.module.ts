import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { buildDataSourceOptions } from './data-source-options.js';

/** Applies pending migrations on a connection without statement limits: a migration may take longer than a request. */
export async function runMigrations(config: AppConfig): Promise<void> {
  const options = buildDataSourceOptions(config, 'maintenance');
  const maintenance = new DataSource({ ...options, migrationsRun: false });
  await maintenance.initialize();
  try {
    await maintenance.runMigrations({ transaction: 'each' });
  } finally {
    await maintenance.destroy();
  }
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        if (config.database.migrationsRun) await runMigrations(config);
        return { ...buildDataSourceOptions(config), migrationsRun: false, retryAttempts: 0 };
      },
    }),
  ],
})
export class DatabaseModule {}
