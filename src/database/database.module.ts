import { Global, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics, WatchedPool } from '../observability/metrics.js';
import { buildDataSourceOptions } from './data-source-options.js';
import { runMigrations } from './migration-runner.js';
import { isBehind, ReadReplica } from './read-replica.js';

export { runMigrations };
export { isBehind, ReadReplica };
export type { ReplicaRead, VersionedRead, VersionedResult } from './read-replica.js';

/** The primary (TypeORM's data source, for every module) and the read replica for the reads that may lag (ReadReplica). */
@Global()
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
  providers: [
    {
      // The pool TypeORM's queries go through, as `pool_name="main"` in the connection metrics.
      provide: 'DATABASE_POOL_METRICS',
      inject: [getDataSourceToken(), Metrics],
      useFactory: (dataSource: DataSource, metrics: Metrics) => {
        const pool = (dataSource.driver as unknown as { master?: WatchedPool }).master;
        if (pool) metrics.watchPool('main', pool);
        return pool ?? null;
      },
    },
    ReadReplica,
  ],
  exports: [ReadReplica],
})
export class DatabaseModule {}
