import { ValidateBy, ValidationOptions } from 'class-validator';
import { hasControlCharacter } from './storable-text.js';

/**
 * At most `max` Unicode code points, as PostgreSQL counts a varchar's length
 * (class-validator's MaxLength counts UTF-16 code units).
 */
export function MaxCodePoints(max: number, validationOptions?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxCodePoints',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || [...value].length <= max,
        defaultMessage: (args) => `${args?.property} must be at most ${max} characters long`,
      },
    },
    validationOptions,
  );
}

/** No C0/C1 control character (line breaks, tabs, escapes): for names shown on one line. */
export function NoControlCharacters(validationOptions?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'noControlCharacters',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !hasControlCharacter(value),
        defaultMessage: (args) => `${args?.property} must not contain control characters (line breaks, tabs, escapes)`,
      },
    },
    validationOptions,
  );
}
