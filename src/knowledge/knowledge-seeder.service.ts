import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DOCUMENT_TYPES } from './ingest/document-types.js';
import { DocumentsService } from './ingest/documents.service.js';

export const SEED_USER = 'system:seed';

/** Ingests every file of a folder of a type the knowledge base accepts (DOCUMENT_TYPES); identical content already stored is skipped. */
export async function ingestFolder(documents: DocumentsService, folder: string, createdBy: string) {
  const files = (await readdir(folder)).filter((file) => Object.hasOwn(DOCUMENT_TYPES, path.extname(file).toLowerCase())).sort();
  const results = [];
  for (const file of files) {
    results.push({ file, ...(await documents.ingest(file, await readFile(path.join(folder, file)), createdBy)) });
  }
  return results;
}

/** Loads the sample corpus into the `default` collection when it is empty at start-up, so a first question has something to find. */
@Injectable()
export class KnowledgeSeeder implements OnApplicationBootstrap {
  private readonly logger = new Logger(KnowledgeSeeder.name);

  constructor(
    private readonly documents: DocumentsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.knowledge.seedOnStart || !(await this.documents.isEmpty())) return;
    const folder = path.resolve(this.config.knowledge.corpusDir);
    try {
      const results = await ingestFolder(this.documents, folder, SEED_USER);
      this.logger.log(`knowledge base was empty: loaded ${results.filter((r) => !r.duplicate).length} documents from ${folder}`);
    } catch (error) {
      this.logger.warn(`sample corpus not loaded from ${folder}: ${(error as Error).message}`);
    }
  }
}
