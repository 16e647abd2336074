import { toStorableText } from '../common/storable-text.js';
import { FieldSpec, FieldTable, SpecClass } from './field-spec.js';

type Plain = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Plain => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Cuts a string to at most `max` UTF-16 units without leaving half a surrogate
 * pair, and makes it storable (jsonb refuses NUL and lone surrogates).
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return toStorableText(text);
  let cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return toStorableText(cut);
}

function toFiniteNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '' && value.length < 64) {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

function inRange(n: number, min?: number, max?: number): boolean {
  return (min === undefined || n >= min) && (max === undefined || n <= max);
}

/** Returns the normalized value, or undefined when the field must be dropped. */
function normalizeValue(spec: FieldSpec, value: unknown): unknown {
  if (value === null) return 'nullable' in spec && spec.nullable ? null : undefined;
  switch (spec.kind) {
    case 'string':
      return typeof value === 'string' ? truncate(value, spec.maxLength) : undefined;
    case 'int': {
      const n = toFiniteNumber(value);
      if (n === undefined) return undefined;
      const rounded = Math.round(n);
      return inRange(rounded, spec.min ?? 0, spec.max) ? rounded : undefined;
    }
    case 'number': {
      const n = toFiniteNumber(value);
      return n !== undefined && inRange(n, spec.min, spec.max) ? n : undefined;
    }
    case 'bool':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      return undefined;
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value) ? value : undefined;
    case 'strings':
      if (!Array.isArray(value)) return undefined;
      return value
        .filter((item): item is string => typeof item === 'string')
        .slice(0, spec.maxItems)
        .map((item) => truncate(item, spec.maxLength));
    case 'numberMap': {
      if (!isPlainObject(value)) return undefined;
      const out: Record<string, number> = {};
      let kept = 0;
      for (const [key, raw] of Object.entries(value)) {
        if (kept >= spec.maxKeys) break;
        const n = toFiniteNumber(raw);
        if (key.length <= 64 && n !== undefined && n >= 0) {
          out[key] = n;
          kept += 1;
        }
      }
      return out;
    }
    case 'nested': {
      const target = spec.target();
      if (!spec.many) return normalizeBySpec(target, value) ?? undefined;
      if (!Array.isArray(value)) return undefined;
      const items: Plain[] = [];
      const limit = spec.maxItems ?? Number.POSITIVE_INFINITY;
      for (const item of value) {
        if (items.length >= limit) break;
        const normalized = normalizeBySpec(target, item);
        if (normalized) items.push(normalized);
      }
      return items;
    }
  }
}

/**
 * Keeps only the declared fields of `cls`, each coerced to its declared kind
 * or dropped. Returns null when the value is not an object or a required
 * field is missing. Descends only into declared nested fields, so cyclic or
 * deeply nested input costs nothing beyond the declared depth.
 */
export function normalizeBySpec(cls: SpecClass, value: unknown): Plain | null {
  if (!isPlainObject(value)) return null;
  const table: FieldTable = cls.fieldTable;
  const out: Plain = {};
  for (const [name, spec] of Object.entries(table)) {
    if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
    const normalized = normalizeValue(spec, value[name]);
    if (normalized !== undefined) out[name] = normalized;
  }
  for (const name of cls.requiredFields) {
    const v = out[name];
    if (v === undefined || v === null || v === '') return null;
  }
  return out;
}
