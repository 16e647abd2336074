import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { OpenAPIObject } from '@nestjs/swagger';

/** Paths are from the repository root, where npm scripts and Jest run. */
export const CLIENT_DIR = resolve('clients', 'typescript');
/** The committed types of the client, generated from the OpenAPI document. */
export const CLIENT_SCHEMA_FILE = join(CLIENT_DIR, 'src', 'schema.d.ts');
/** The committed OpenAPI document they come from, for other generators. */
export const CLIENT_OPENAPI_FILE = join(CLIENT_DIR, 'openapi.json');

/** The generator's flags: one type per schema at the top level too (`TokenEvent`, `ErrorCode`, …). */
const GENERATOR_FLAGS = ['--root-types', '--root-types-no-schema-prefix', '--root-types-keep-casing'];

/** The document as it is committed: stable key order from Nest, two-space indent, final newline. */
export function openApiDocumentText(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Runs openapi-typescript (the client package's own copy, whatever
 * TypeScript the root uses) on `document`, writing the types to `outFile`.
 */
export async function generateClientTypes(document: OpenAPIObject, outFile: string): Promise<void> {
  const require = createRequire(join(CLIENT_DIR, 'package.json'));
  const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
  const work = await mkdtemp(join(tmpdir(), 'openapi-'));
  try {
    const input = join(work, 'openapi.json');
    await writeFile(input, openApiDocumentText(document));
    await promisify(execFile)(process.execPath, [cli, input, '--output', outFile, ...GENERATOR_FLAGS], { cwd: CLIENT_DIR });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
