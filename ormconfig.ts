import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { applyEnvFile } from './src/config/env-file.js';
import { buildDataSourceOptions } from './src/database/data-source-options.js';

/** TypeORM CLI data source: `npm run migration:run`, `migration:revert`, `migration:generate`. */
applyEnvFile();
export default new DataSource(buildDataSourceOptions(loadConfig(), 'maintenance'));
