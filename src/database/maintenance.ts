import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { buildDataSourceOptions } from './data-source-options.js';

/**
 * Runs `work` on a short-lived connection without the app's statement and
 * lock limits: migrations, index builds and backfills may take longer than a
 * request, and may wait for another instance doing the same.
 */
export async function withMaintenanceDataSource<T>(config: AppConfig, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const options = buildDataSourceOptions(config, 'maintenance');
  // Three: the migrations' lock, their query runner, and a migration's own pool client (the LangGraph checkpoint tables).
  const maintenance = new DataSource({ ...options, migrationsRun: false, extra: { ...options.extra, max: 3 } });
  await maintenance.initialize();
  try {
    return await work(maintenance);
  } finally {
    await maintenance.destroy();
  }
}
