import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * docs/protocol.md names every field the service's schemas emit: each property of each schema of the OpenAPI
 * document (clients/typescript/openapi.json, which test/client-types.e2e-spec.ts keeps equal to the live one) must
 * appear in the page as code (`name`, or inside a code span such as `{name, …}`).
 */
const root = process.cwd();

interface OpenApiSchema {
  properties?: Record<string, unknown>;
}

/** The fields of `schemas` that `page` does not name in a code span, as `Schema.field`. */
export function unlistedFields(schemas: Record<string, OpenApiSchema>, page: string): string[] {
  const named = new Set([...page.matchAll(/`([^`]+)`/g)].flatMap((span) => span[1].match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []));
  return Object.entries(schemas).flatMap(([schema, { properties = {} }]) =>
    Object.keys(properties)
      .filter((field) => !named.has(field))
      .map((field) => `${schema}.${field}`),
  );
}

describe('docs/protocol.md', () => {
  it('misses a field only the schema has (a deliberate omission)', () => {
    expect(unlistedFields({ Answer: { properties: { text: {}, confidence: {} } } }, 'An `Answer` has `{text}`; confidence is prose.')).toEqual(['Answer.confidence']);
  });

  it('names every field of every schema of the OpenAPI document', () => {
    const document = JSON.parse(readFileSync(path.join(root, 'clients', 'typescript', 'openapi.json'), 'utf8')) as { components: { schemas: Record<string, OpenApiSchema> } };
    const page = readFileSync(path.join(root, 'docs', 'protocol.md'), 'utf8');
    expect(Object.keys(document.components.schemas).length).toBeGreaterThan(50);
    expect(unlistedFields(document.components.schemas, page)).toEqual([]);
  });
});
