/**
 * A declarative description of one wire field. Every protocol class of the
 * trace module is described once by a table of these; the class-validator
 * rules, the Swagger schema, the TypeScript shape and the normalizer are all
 * derived from that table, so the field list exists in one place only.
 */
export type FieldSpec =
  | { kind: 'string'; maxLength: number; required?: boolean; nullable?: boolean; description?: string }
  | { kind: 'int'; min?: number; max?: number; nullable?: boolean; description?: string }
  | { kind: 'number'; min?: number; max?: number; nullable?: boolean; description?: string }
  | { kind: 'bool'; nullable?: boolean; description?: string }
  | { kind: 'enum'; values: readonly string[]; enumName: string; nullable?: boolean; description?: string }
  | { kind: 'strings'; maxItems: number; maxLength: number; nullable?: boolean; description?: string }
  | { kind: 'numberMap'; maxKeys: number; description?: string }
  | { kind: 'nested'; target: () => SpecClass; many: boolean; maxItems?: number; nullable?: boolean; description?: string };

export type FieldTable = Record<string, FieldSpec>;

/** A protocol class generated from a field table. */
export interface SpecClass {
  new (): object;
  readonly fieldTable: FieldTable;
  /** Values with these fields missing make the whole object invalid (normalizes to null). */
  readonly requiredFields: readonly string[];
}

type NullableOf<S> = S extends { nullable: true } ? null : never;

type ValueOf<S extends FieldSpec> = S extends { kind: 'string' }
  ? string
  : S extends { kind: 'int' | 'number' }
    ? number
    : S extends { kind: 'bool' }
      ? boolean
      : S extends { kind: 'enum'; values: readonly (infer V)[] }
        ? V
        : S extends { kind: 'strings' }
          ? string[]
          : S extends { kind: 'numberMap' }
            ? Record<string, number>
            : S extends { kind: 'nested'; many: true }
              ? Record<string, unknown>[]
              : S extends { kind: 'nested' }
                ? Record<string, unknown>
                : never;

/** The TypeScript shape of a field table: every field optional, nullable where declared. */
export type ShapeOf<T extends FieldTable> = {
  -readonly [K in keyof T]?: ValueOf<T[K]> | NullableOf<T[K]>;
};
