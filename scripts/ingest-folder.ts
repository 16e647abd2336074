import 'reflect-metadata';
import path from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module.js';
import { DocumentsService } from '../src/knowledge/documents.service.js';
import { ingestFolder } from '../src/knowledge/knowledge-seeder.service.js';

/** Usage: npm run knowledge:ingest -- <folder>   (adds every .txt, .md and .pdf; identical content is skipped) */
async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) {
    process.stderr.write('usage: npm run knowledge:ingest -- <folder>\n');
    process.exit(2);
  }
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(), { logger: ['warn', 'error'] });
  try {
    const results = await ingestFolder(app.get(DocumentsService), path.resolve(folder), 'cli:ingest');
    for (const r of results) {
      process.stdout.write(`${r.duplicate ? 'skipped (already stored)' : 'added'}  ${r.file}  ${r.document.leaf_count} leaf chunks\n`);
    }
  } finally {
    await app.close();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
