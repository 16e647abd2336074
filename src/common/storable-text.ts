import { registerDecorator, ValidationOptions } from 'class-validator';

/**
 * Text PostgreSQL can store and give back unchanged. A `text` column refuses
 * NUL, and a lone UTF-16 surrogate has no UTF-8 form: the driver would write
 * U+FFFD instead (silently changing the value) and `jsonb` refuses it. Input
 * carrying either is rejected at the edge; text the service produces itself
 * (model output, extracted PDF text) is normalized with `toStorableText`.
 */

// eslint-disable-next-line no-control-regex -- finding NUL is the point
const NUL = /\u0000/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** C0 and C1 control characters (tab, line feed, carriage return included). */
const CONTROL = /\p{Cc}/u;
/** What a reader sees: letters, marks on letters, digits, punctuation, symbols. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/** Why `value` cannot be stored as it is, or null when it can. */
export function storableTextProblem(value: string): string | null {
  if (NUL.test(value)) return 'contains a NUL character (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode)';
  return null;
}

export function isStorableText(value: string): boolean {
  return storableTextProblem(value) === null;
}

/** Removes NUL characters and replaces lone surrogates with U+FFFD, so the text can be stored and read back. */
export function toStorableText(value: string): string {
  if (isStorableText(value)) return value;
  // eslint-disable-next-line no-control-regex -- removing NUL is the point
  return value.replace(/\u0000/g, '').replace(LONE_SURROGATES, '\ufffd');
}

export function hasControlCharacter(value: string): boolean {
  return CONTROL.test(value);
}

/** False for text made only of white space, zero-width and other invisible format characters. */
export function hasVisibleCharacter(value: string): boolean {
  return VISIBLE.test(value);
}

/**
 * class-validator rule: a string PostgreSQL stores unchanged (no NUL, no lone
 * surrogate). With `requireVisible`, it must also show at least one character.
 */
export function IsStorableText(options: { requireVisible?: boolean } = {}, validationOptions?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isStorableText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validationOptions,
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') return true; // the type rule reports it
          return isStorableText(value) && (!options.requireVisible || hasVisibleCharacter(value));
        },
        defaultMessage(args): string {
          const value = args?.value;
          if (typeof value === 'string') {
            const problem = storableTextProblem(value);
            if (problem) return `${args?.property} ${problem}`;
          }
          return `${args?.property} must contain visible text (not only white space or invisible characters)`;
        },
      },
    });
  };
}
