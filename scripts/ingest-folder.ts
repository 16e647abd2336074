import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module.js';
import { loadConfig } from '../src/config/app-config.js';
import { chooseStores } from '../src/embedded-stores.js';
import { applyEnvFile } from '../src/config/env-file.js';
import { ensureDatabase } from '../src/database/ensure-database.js';
import { IngestJobs } from '../src/knowledge/ingest/jobs/ingest-jobs.service.js';
import { ingestFolderAsJobs } from './folder-ingest.js';

/**
 * Usage: npm run knowledge:ingest -- <folder>
 * Adds every .txt, .md, .pdf, .docx, .xlsx, .csv and .html of the folder as ingest jobs, the same jobs
 * an upload makes: this process works on them too (KNOWLEDGE_INGEST_CONCURRENCY),
 * beside any running instance. Shows a progress bar per file; identical
 * content already stored is skipped. Exits with 1 when a job failed.
 */
async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) {
    process.stderr.write('usage: npm run knowledge:ingest -- <folder>\n');
    process.exit(2);
  }
  applyEnvFile();
  // The stores the service would choose: the embedded database (while no service holds it) and no Redis included.
  const { config, embedded } = await chooseStores(loadConfig());
  let failed: number;
  try {
    if (config.database.createIfMissing) await ensureDatabase(config.database.url);
    const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['warn', 'error'] });
    try {
      const result = await ingestFolderAsJobs(app.get(IngestJobs), folder, process.stdout);
      failed = result.failed;
      for (const line of result.lines) process.stdout.write(`${line}\n`);
    } finally {
      await app.close();
    }
  } finally {
    await embedded?.stop();
  }
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
