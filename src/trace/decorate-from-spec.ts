import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { FieldSpec, FieldTable } from './field-spec.js';

type PropertyDecoratorFn = (target: object, propertyKey: string) => void;

const isFiniteNumberMap = (value: unknown, maxKeys: number): boolean => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length <= maxKeys && entries.every(([k, v]) => k.length <= 64 && typeof v === 'number' && Number.isFinite(v) && v >= 0);
};

function IsNumberMap(maxKeys: number): PropertyDecorator {
  return ValidateBy({
    name: 'isNumberMap',
    validator: {
      validate: (value) => isFiniteNumberMap(value, maxKeys),
      defaultMessage: (args) => `${args?.property} must map at most ${maxKeys} names to non-negative numbers`,
    },
  });
}

function validatorsFor(spec: FieldSpec): PropertyDecorator[] {
  switch (spec.kind) {
    case 'string':
      return [IsString(), MaxLength(spec.maxLength), ...(spec.required ? [IsNotEmpty()] : [])];
    case 'int':
      return [IsInt(), Min(spec.min ?? 0), ...(spec.max !== undefined ? [Max(spec.max)] : [])];
    case 'number':
      return [IsNumber({ allowNaN: false, allowInfinity: false }), ...(spec.min !== undefined ? [Min(spec.min)] : []), ...(spec.max !== undefined ? [Max(spec.max)] : [])];
    case 'bool':
      return [IsBoolean()];
    case 'enum':
      return [IsIn(spec.values as string[])];
    case 'strings':
      return [IsArray(), ArrayMaxSize(spec.maxItems), IsString({ each: true }), MaxLength(spec.maxLength, { each: true })];
    case 'numberMap':
      return [IsObject(), IsNumberMap(spec.maxKeys)];
    case 'nested': {
      const target = spec.target;
      const rules: PropertyDecorator[] = [ValidateNested({ each: spec.many }), Type(() => target())];
      if (spec.many) rules.push(IsArray(), ...(spec.maxItems ? [ArrayMaxSize(spec.maxItems)] : []));
      else rules.push(IsObject());
      return rules;
    }
  }
}

function swaggerOptionsFor(spec: FieldSpec, required: boolean): ApiPropertyOptions {
  const base = {
    description: spec.description,
    nullable: 'nullable' in spec && spec.nullable ? true : undefined,
    required,
  };
  switch (spec.kind) {
    case 'string':
      return { ...base, type: String, maxLength: spec.maxLength, minLength: spec.required ? 1 : undefined };
    case 'int':
      return { ...base, type: 'integer', minimum: spec.min ?? 0, maximum: spec.max };
    case 'number':
      return { ...base, type: Number, minimum: spec.min, maximum: spec.max };
    case 'bool':
      return { ...base, type: Boolean };
    case 'enum':
      return { ...base, enum: spec.values as string[], enumName: spec.enumName };
    case 'strings':
      return { ...base, type: String, isArray: true, maxItems: spec.maxItems };
    case 'numberMap':
      return {
        description: base.description,
        type: 'object',
        additionalProperties: { type: 'number', minimum: 0 },
        selfRequired: required,
      } as ApiPropertyOptions;
    case 'nested':
      return spec.many ? { ...base, type: () => spec.target(), isArray: true, maxItems: spec.maxItems } : { ...base, type: () => spec.target() };
  }
}

/**
 * Applies the class-validator rules and the Swagger schema of a field table to
 * a class. A field is optional unless listed in `required`; a nullable field
 * accepts null, a non-nullable optional field accepts only absence.
 */
export function decorateFromSpec(cls: { prototype: object }, table: FieldTable, required: readonly string[] = []): void {
  for (const [name, spec] of Object.entries(table)) {
    const isRequired = required.includes(name);
    const nullable = 'nullable' in spec && spec.nullable === true;
    const decorators: PropertyDecorator[] = [];
    if (!isRequired) {
      decorators.push(ValidateIf((obj: Record<string, unknown>) => (nullable ? obj[name] !== undefined && obj[name] !== null : obj[name] !== undefined)));
    }
    decorators.push(...validatorsFor(spec));
    const swagger = swaggerOptionsFor(spec, isRequired);
    decorators.push(isRequired ? ApiProperty(swagger) : ApiPropertyOptional(swagger));
    for (const decorate of decorators) (decorate as PropertyDecoratorFn)(cls.prototype, name);
  }
}
