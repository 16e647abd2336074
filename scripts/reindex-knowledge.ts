import 'reflect-metadata';
import cliProgress from 'cli-progress';
import { DataSource } from 'typeorm';
import { TOKENIZER_VERSION } from '../src/common/text.js';
import { ConfigValidationError, loadConfig } from '../src/config/app-config.js';
import { StartupFailure } from '../src/common/startup-failure.js';
import { applyEnvFile } from '../src/config/env-file.js';
import { buildDataSourceOptions } from '../src/database/data-source-options.js';
import { runMigrations } from '../src/database/database.module.js';
import { createEmbeddingProvider } from '../src/knowledge/index/embedding-registry.js';
import { describeSpace } from '../src/knowledge/index/index-identity.js';
import { reindexKnowledge } from '../src/knowledge/index/reindex.js';

/**
 * `npm run knowledge:reindex`: moves the knowledge base into the embedding
 * space the current settings make (EMBEDDING_PROVIDER, EMBEDDING_MODEL,
 * EMBEDDING_DIMENSIONS, the tokenizer version), re-embedding every leaf.
 * Stop the instances first: they refuse to start in the old space afterwards.
 */
async function main(): Promise<void> {
  applyEnvFile();
  const config = loadConfig();
  await runMigrations(config);
  const embeddings = createEmbeddingProvider(config);
  const space = { provider: embeddings.provider, model: embeddings.model, dimensions: embeddings.dimensions, tokenizer_version: TOKENIZER_VERSION };
  const dataSource = await new DataSource(buildDataSourceOptions(config, 'maintenance')).initialize();
  const bar = new cliProgress.SingleBar({ format: ' {bar} {percentage}% | {value}/{total} leaves', noTTYOutput: !process.stdout.isTTY }, cliProgress.Presets.shades_classic);
  try {
    process.stdout.write(`re-indexing the knowledge base as ${describeSpace(space)}\n`);
    let started = false;
    const result = await reindexKnowledge(dataSource, embeddings, space, (done, total) => {
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(done);
    });
    bar.stop();
    process.stdout.write(`${result.reindexed} leaves re-indexed; the knowledge base is in this space now\n`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error instanceof ConfigValidationError || error instanceof StartupFailure ? error.message : (error.stack ?? String(error))}\n`);
  process.exit(1);
});
