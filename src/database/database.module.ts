import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { buildDataSourceOptions } from './data-source-options.js';
import { runMigrations } from './migration-runner.js';

export { runMigrations };

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
