import type { ModuleMetadata } from '@nestjs/common';

/**
 * The modules a deployment adds to the service: its own tools, retrieval
 * stages and routes, each in a folder of its own under src/extensions/ (see
 * docs/extending.md). Adding one is its folder and a line here; no other file
 * of the service changes.
 */
export const EXTENSION_MODULES: ExtensionModules = [];

export type ExtensionModules = NonNullable<ModuleMetadata['imports']>;
