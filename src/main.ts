/**
 * The service's entry (`node dist/main.js`): reads `.env`, then loads the
 * tracing entry, and only then the application. The application is imported
 * dynamically so that its modules (Express, pg, Redis) load after tracing
 * has hooked the loader: static imports would all be linked before any of
 * this code ran.
 */
import { applyEnvFile } from './config/env-file.js';

const envFile = applyEnvFile();
await import('./tracing.js');
const { bootstrap } = await import('./bootstrap.js');
await bootstrap(envFile);
